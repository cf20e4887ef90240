"""`selfbench run` end to end on a generated history: every stage real (mining, drafting in the
local sandbox, authoring, audit, compile, validation, the coupling check, export). The sample
history's run, with its rejections and every fallback, is the demo's (`test_demo.py`).

The reference run fills `--easy 2` with `-j 2` from a history of two pull requests, each one
easy task (`run_history.generate`). The kill test then runs the same inputs with `-j 1` in a
new directory as a real process, stops it with Ctrl-C once a candidate has started and resumes
it, then kills it (`SIGKILL` to its process group) five times, each at a random delay of up to
3 s after the run logged a new event (a resumed process's own start included, so kills land in
start-up, between stages and inside them), resumes it each time, and requires every kill to land
before the run ends, the export to be byte-identical to the reference's and no finished step to
have run twice. A failure names its random seed. (Five, not ten: each kill costs a resumed
process's start-up and the step it interrupts, and ten attempts already counted five landed
kills as enough.)
"""

from __future__ import annotations

import io
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from harbor_env import harbor_venv
from run_helpers import SCRIPTED_AUTHOR, SCRIPTED_REVIEWER
from run_history import generate
from selfbench.artifacts.quality_record import QUALITY_FILE, read_quality
from selfbench.cli import main
from selfbench.evaluate.bench import open_benchmark
from selfbench.export import extract_export, verify_export

SOURCE = "https://example.com/example/genkit"
_KILLS = 5
_NO_QUALITY = "--no-quality"
"""For the tests of another stage: the quality checks run in the reference run, the kill test
and `test_run_quality.py`, and would only add minutes here."""
_PROCESS_LIMIT = 600.0

pytestmark = pytest.mark.sandbox


def _argv(history: Path, out: Path, *extra: str, easy: int = 2) -> list[str]:
    return [
        "run",
        "--repo",
        str(history),
        "--easy",
        str(easy),
        "--over-fetch",
        "1",
        "--source-url",
        SOURCE,
        "--out",
        str(out),
        *extra,
    ]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("history"), 2)


@pytest.fixture(scope="module")
def reference(history: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The uninterrupted run (-j 2): its export, and what it printed."""
    out = tmp_path_factory.mktemp("reference") / "bench.tar.gz"
    completed = subprocess.run(
        [sys.executable, "-m", "selfbench", *_argv(history, out, "-j", "2")],
        capture_output=True,
        text=True,
        check=False,
        timeout=_PROCESS_LIMIT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out, completed.stdout


def _events(run_dir: Path) -> list[dict[str, object]]:
    if not (run_dir / "events.jsonl").is_file():
        return []
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


STAGES = [
    "mined",
    "drafted",
    "authored",
    "audited",
    "compiled",
    "validated",
    "coupling-checked",
    "quality-checked",
    "accepted",
]


def test_a_run_exports_a_verified_benchmark_with_its_provenance(
    reference: tuple[Path, str],
) -> None:
    out, printed = reference
    assert "accepted pr-1 (easy)" in printed
    assert "accepted pr-2 (easy)" in printed
    assert "easy   2 of 2 accepted, 0 rejected, 2 mined" in printed
    assert f"export  {out}  (verified)" in printed
    assert f"selfbench review {out}" in printed
    assert f"selfbench eval {out} --agent codex:openai/gpt-5 --agent claude-code:" in printed

    manifest = verify_export(out).manifest
    assert [task.task_id for task in manifest.tasks] == ["pr-1", "pr-2"]
    provenance = manifest.provenance
    assert provenance is not None
    assert provenance["author"] == "draft"
    assert provenance["reviewer"] is None
    validation = provenance["validation"]
    assert isinstance(validation, dict)
    assert validation["environment"] == "local"
    assert provenance["tasks"] == {
        f"pr-{n}": {"candidate": f"pr-{n}", "tier": "easy", "stages": STAGES} for n in (1, 2)
    }
    assert main(["verify", str(out)]) == 0


def test_each_exported_task_carries_the_quality_record_drafting_wrote(
    reference: tuple[Path, str], tmp_path: Path
) -> None:
    out, printed = reference
    listed = verify_export(out).manifest.tasks
    assert all(task.quality_sha256 is not None for task in listed)
    extract_export(out, out=tmp_path / "tasks")
    verdicts = {}
    for task in ("pr-1", "pr-2"):
        record = read_quality(tmp_path / "tasks" / task / QUALITY_FILE)
        assert record.taskId == task
        assert record.seconds == 0.0  # the export's bytes hold no timing
        assert record.mutation is not None
        verdicts[task] = record.verdict
    shown = ", ".join(
        f"{sum(v == verdict for v in verdicts.values())} {verdict}"
        for verdict in ("ship", "review", "reject")
    )
    assert f"quality {shown}" in printed


def _member_texts(archive: bytes, name: str) -> dict[str, str]:
    """Every file of an export archive, the task archives in it opened too, as text."""
    found: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is None:
                continue
            data, where = handle.read(), f"{name}:{member.name}"
            if member.name.endswith(".tar.gz"):
                found.update(_member_texts(data, where))
            else:
                found[where] = data.decode("latin-1")
    return found


def test_no_exported_file_names_a_path_of_this_machine(
    reference: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The run directory, the repository and the logs are all under the tests' temporary root:
    no file of the export (the manifest, each bundle, review and quality record) names it."""
    out, _ = reference
    root = str(tmp_path_factory.getbasetemp())
    texts = _member_texts(out.read_bytes(), out.name)
    assert any(name.endswith("harbor-task/quality.json") for name in texts)
    assert [name for name, text in sorted(texts.items()) if root in text] == []


@pytest.mark.parametrize("given", ["bench.run", "bench.run/export"])
def test_eval_takes_a_run_directory_as_the_benchmark_its_export_holds(
    reference: tuple[Path, str], given: str
) -> None:
    out, _ = reference
    with open_benchmark(out) as exported, open_benchmark(out.parent / given) as run:
        assert run.benchmark_id == exported.benchmark_id
        assert [(task.task_id, task.digest) for task in run.tasks] == [
            (task.task_id, task.digest) for task in exported.tasks
        ]
        verdicts = [None if task.quality is None else task.quality.verdict for task in run.tasks]
        assert None not in verdicts
        assert verdicts == [
            None if task.quality is None else task.quality.verdict for task in exported.tasks
        ]


def test_eval_of_a_run_directory_runs_its_tasks(
    reference: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = reference
    results = tmp_path / "results"
    argv = ["eval", str(out.parent / "bench.run"), "--agent", "oracle", "--results", str(results)]
    assert main(argv) == 0
    assert capsys.readouterr().err.splitlines()[-2:] == [
        "pr-1 oracle #1: pass",
        "pr-2 oracle #1: pass",
    ]


def test_status_shows_each_tier_and_stage(
    reference: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = reference
    run_dir = out.with_name("bench.run")
    assert main(["status", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "│ budget          │    2 │      0 │    0 │" in shown
    assert "│ accepted        │    2 │      0 │    0 │" in shown
    assert "│ unused          │    0 │      0 │    0 │" in shown
    assert "exported" in shown

    assert main(["status", str(run_dir), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    easy = next(tier for tier in status["tiers"] if tier["tier"] == "easy")
    assert (easy["accepted"], easy["rejected"], easy["blocked"]) == (2, 0, None)
    assert easy["stages"]["accepted"] == 2
    assert status["finished"] is True


def _start(history: Path, out: Path, run_dir: Path, *, resume: bool) -> subprocess.Popen[str]:
    argv = ["run", "--resume", str(run_dir)] if resume else [*_argv(history, out), "--run-dir"]
    if not resume:
        argv.append(str(run_dir))
    return subprocess.Popen(
        [sys.executable, "-m", "selfbench", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


_PROGRESS = ("mined", "start", "step", "exported")
"""Events that mean the run got further (not `started` or `resumed`, which every process logs)."""
_ANY = ("started", "resumed", *_PROGRESS)


def _progress(run_dir: Path, kinds: tuple[str, ...] = _PROGRESS) -> int:
    return sum(event["event"] in kinds for event in _events(run_dir))


def _wait_for_progress(
    run_dir: Path, seen: int, process: subprocess.Popen[str], kinds: tuple[str, ...] = _PROGRESS
) -> bool:
    """Wait until the run has logged more than `seen` such events; False if it ended first."""
    deadline = time.monotonic() + _PROCESS_LIMIT
    while time.monotonic() < deadline:
        if _progress(run_dir, kinds) > seen:
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.05)
    raise AssertionError("the run got no further in time")


def _interrupt_at_the_first_start(process: subprocess.Popen[str], run_dir: Path, out: Path) -> None:
    """Ctrl-C once a candidate has started: the run stops cleanly (exit 130, no export) and says
    how to resume."""
    while not any(event["event"] == "start" for event in _events(run_dir)):
        assert _wait_for_progress(run_dir, _progress(run_dir), process)  # a candidate started
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=_PROCESS_LIMIT)

    assert process.returncode == 130, output
    assert f"interrupted; resume with: selfbench run --resume {run_dir}" in output
    assert not out.exists()


def test_ctrl_c_then_kill_9_at_five_random_points_then_resume_gives_the_same_bytes(
    history: Path, reference: tuple[Path, str], tmp_path: Path
) -> None:
    """One run for both ways of stopping: Ctrl-C first (a clean stop), then five kills, each
    followed by a resume; the export is the uninterrupted run's, and no step ran twice."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    out, run_dir = tmp_path / "bench.tar.gz", tmp_path / "bench.run"
    kills = 0
    _interrupt_at_the_first_start(_start(history, out, run_dir, resume=False), run_dir, out)
    process = _start(history, out, run_dir, resume=True)
    while kills < _KILLS:
        if not _wait_for_progress(run_dir, _progress(run_dir, _ANY), process, _ANY):
            break
        time.sleep(rng.uniform(0.0, 3.0))
        if process.poll() is not None:
            break
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()  # reads what it printed and closes the pipe
        kills += 1
        process = _start(history, out, run_dir, resume=True)
    output, _ = process.communicate(timeout=_PROCESS_LIMIT)
    assert process.returncode == 0, output

    assert kills == _KILLS, f"only {kills} kills landed before the run ended (seed {seed})"
    assert out.read_bytes() == reference[0].read_bytes(), f"seed {seed}"
    steps = [
        (event["candidate"], event["step"])
        for event in _events(run_dir)
        if event["event"] == "step"
    ]
    assert len(steps) == len(set(steps)), f"a finished step ran again after a resume (seed {seed})"


def _start_run(
    argv: list[str], run_dir: Path | None, marker: str, sleeper: str
) -> subprocess.Popen[str]:
    """`selfbench run` (in `run_dir`; None: `argv` names it) in its own session, once `sleeper`
    (a stage's process) has started."""
    where = [] if run_dir is None else ["--run-dir", str(run_dir)]
    process = subprocess.Popen(
        [sys.executable, "-m", "selfbench", *argv, *where],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + _PROCESS_LIMIT
    while not _running(marker):
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, f"{sleeper} never started"
        time.sleep(0.1)
    return process


def _running(marker: str) -> bool:
    """Whether a process runs with `marker` as its last argument (the run's own command line
    holds it inside the author command's text)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:-1] and argv[:-1][-1] == marker.encode():
            return True
    return False


_SLEEP = "import time; time.sleep(600)"


def _interrupted_ends(
    process: subprocess.Popen[str], run_dir: Path, marker: str, what: str, *, twice: bool = False
) -> None:
    """Ctrl-C (twice, 0.2 s apart, with `twice`) to a run whose `what` (a process with `marker`)
    is running: the run exits 130 at once saying how to resume, and that process ends with it."""
    interrupted = time.monotonic()
    process.send_signal(signal.SIGINT)
    if twice:
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)

    assert process.returncode == 130, output
    assert time.monotonic() - interrupted < 20, output
    resume = f"resume with: selfbench run --resume {run_dir}"
    if twice:
        assert f"stopped at once; {resume}" in output or f"interrupted; {resume}" in output, output
    else:
        assert "stopping the running stages (Ctrl-C again: stop at once)" in output
        assert f"interrupted; {resume}" in output
    deadline = time.monotonic() + 5
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(marker), f"{what} outlived the stopped run"


def _next_step(run_dir: Path) -> tuple[str, str]:
    state = json.loads((run_dir / "candidates" / "pr-1.json").read_text())
    return state["status"], state["next"]


def test_ctrl_c_ends_a_sleeping_setup_and_stops_at_once(tmp_path: Path) -> None:
    """A sandbox phase (here a setup that sleeps) runs in its own session, out of the terminal's
    reach: the stop ends it (SIGTERM, SIGKILL after 2 s) instead of waiting for its limit, and
    the draft stays undone."""
    marker = f"selfbench-sleeping-draft-{os.getpid()}-{random.randrange(1 << 30)}"
    out, run_dir = tmp_path / "bench.tar.gz", tmp_path / "bench.run"
    config = f"setupCommand = \"python3 -c '{_SLEEP}' {marker}\"\n"
    argv = _argv(generate(tmp_path, 1, config=config), out, easy=1)
    process = _start_run(argv, run_dir, marker, "the draft stage's sleeper")
    _interrupted_ends(process, run_dir, marker, "the draft stage's process")
    assert _next_step(run_dir) == ("active", "draft")


def test_ctrl_c_ends_the_author_and_a_second_one_kills_it_at_once(
    history: Path, tmp_path: Path
) -> None:
    """The author command runs in its own session too, here one that ignores SIGTERM: the
    first Ctrl-C ends it all the same (bwrap itself is stopped, and every process of its PID
    namespace with it) and the author stays undone. Resumed, the author starts again; the
    second Ctrl-C then does not wait for the grace period: the author's group is killed, and
    the run exits 130 saying how to resume (it may already be stopping when the second comes)."""
    marker = f"selfbench-sleeping-author-{os.getpid()}-{random.randrange(1 << 30)}"
    out, run_dir = tmp_path / "bench.tar.gz", tmp_path / "bench.run"
    stubborn = f"import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); {_SLEEP}"
    sleeper = f'{sys.executable} -c "{stubborn}" {marker}'  # only SIGKILL ends it
    argv = [*_argv(history, out, _NO_QUALITY, easy=1), "--author", sleeper]
    process = _start_run(argv, run_dir, marker, "the author's sleeper")
    _interrupted_ends(process, run_dir, marker, "the author's process")
    assert _next_step(run_dir) == ("active", "author")

    resumed = _start_run(["run", "--resume", str(run_dir)], None, marker, "the resumed author")
    _interrupted_ends(resumed, run_dir, marker, "the author's process", twice=True)


_AUTHORED = ["mined", "drafted", "authored", "audited", "compiled"]


def _provenance(out: Path) -> dict[str, Any]:
    """The verified export's provenance."""
    manifest = verify_export(out).manifest
    assert manifest.provenance is not None
    return manifest.provenance


def test_a_scripted_mcp_author_authors_and_its_broken_task_is_repaired_once(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    author = f"{SCRIPTED_AUTHOR} --break"
    argv = [*_argv(history, out, _NO_QUALITY, easy=1), "--author", author]
    assert main(argv) == 0, capsys.readouterr()

    provenance = _provenance(out)
    assert provenance["author"] == Path(sys.executable).name
    assert provenance["tasks"]["pr-1"]["stages"] == [
        *_AUTHORED,
        "validation-failed",
        "repaired",
        "audited",
        "compiled",
        "validated",
        "coupling-checked",
        "accepted",
    ]
    assert "--break" not in json.dumps(provenance)
    logs = sorted(path.name for path in (tmp_path / "bench.run" / "logs" / "pr-1").iterdir())
    assert "2-author-author.log" in logs
    assert "6-repair-repair.log" in logs


def test_a_coupled_task_is_repaired_once_through_the_driver_and_then_accepted(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reviewer finds the held-out tests checking an exact message the instruction does not
    give; the author's coupling repair rewrites that test (and nothing else), then the task is
    audited, compiled, validated and checked again."""
    out = tmp_path / "bench.tar.gz"
    exact = 'assert describe_1([1, 2, 3, 4]) == "0 of 4 kept"'
    rewritten = "assert describe_1([])"
    author = shlex.join([*shlex.split(SCRIPTED_AUTHOR), "--replace", exact, rewritten])
    reviewer = shlex.join([*shlex.split(SCRIPTED_REVIEWER), "coupled-if", exact])
    argv = [*_argv(history, out, _NO_QUALITY, easy=1), "--author", author, "--reviewer", reviewer]
    assert main(argv) == 0, capsys.readouterr()

    provenance = _provenance(out)
    assert provenance["reviewer"] == Path(sys.executable).name
    assert provenance["tasks"]["pr-1"]["stages"] == [
        *_AUTHORED,
        "validated",
        "coupled",
        "coupling-repaired",
        "audited",
        "compiled",
        "validated",
        "coupling-checked",
        "accepted",
    ]
    run_dir = tmp_path / "bench.run"
    logs = sorted(path.name for path in (run_dir / "logs" / "pr-1").iterdir())
    assert any("coupling-repair" in name for name in logs), logs
    state = json.loads((run_dir / "candidates" / "pr-1.json").read_text())
    repaired = (run_dir / state["taskDir"] / "test.patch").read_text()
    assert exact not in repaired
    assert rewritten in repaired


_PROBE_CONFIG = (
    """setupCommand = 'test "${#SELFBENCH_PROBE}" = 9 && python3 -m venv .venv"""
    """ && .venv/bin/python -m pip install --quiet -e ".[test]"'\n"""
)
"""A base commit whose setup needs a variable only `--setup-env` hands it (a proxy's CA file, on
a real machine): set, drafting and validation both see it; not set, setup fails."""


def test_setup_env_reaches_drafting_and_validation_and_only_its_name_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    history = generate(tmp_path, 1, config=_PROBE_CONFIG)
    monkeypatch.delenv("SELFBENCH_PROBE", raising=False)
    unset = tmp_path / "unset.tar.gz"
    assert main([*_argv(history, unset, "--setup-env", "SELFBENCH_PROBE", easy=1)]) == 2
    assert capsys.readouterr().err == (
        "error: --setup-env SELFBENCH_PROBE: not set in this environment\n"
    )
    assert not unset.with_name("unset.run").exists()

    monkeypatch.setenv("SELFBENCH_PROBE", "secret-42")
    without = tmp_path / "without.tar.gz"
    assert main(_argv(history, without, easy=1)) == 1
    assert "rejected pr-1 (easy): draft: setup failed (log " in capsys.readouterr().out
    assert main(["status", str(without.with_name("without.run"))]) == 0
    shown = capsys.readouterr().out
    assert "rejected pr-1 (easy): draft: setup failed (log " in shown
    assert "\n   mined → rejected\n" in shown

    out = tmp_path / "bench.tar.gz"
    assert main([*_argv(history, out, "--setup-env", "SELFBENCH_PROBE", easy=1)]) == 0
    shown = capsys.readouterr().out
    assert "accepted pr-1 (easy)" in shown
    # each stage is named as it starts, so a minute of drafting is not a silent one
    stages = (
        *("drafting", "authoring", "auditing", "compiling", "validating", "coupling check"),
        "quality check",
    )
    started = [line.split(" pr-1 ")[0] for line in shown.splitlines() if " pr-1 (easy)…" in line]
    assert started == list(stages)
    run_dir = out.with_name("bench.run")
    assert json.loads((run_dir / "inputs.json").read_text())["setupEnv"] == ["SELFBENCH_PROBE"]
    written = [out, *run_dir.rglob("*")]
    assert not [path for path in written if path.is_file() and b"secret-42" in path.read_bytes()]


def test_a_harbor_that_cannot_run_stops_the_run_and_the_candidate_waits(
    history: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Harbor that gives no verdict is the machine's fault, not the candidate's: the run stops
    (exit 2) with the candidate still before its validation, to be resumed once Harbor works."""
    out, run_dir = tmp_path / "bench.tar.gz", tmp_path / "bench.run"
    missing = tmp_path / "no-harbor"
    assert main([*_argv(history, out, easy=1), "--env", "harbor", "--harbor", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"error: --harbor {missing}: not found (install Harbor, or give its path)\n"
    )
    assert not run_dir.exists()

    for name in ("DAYTONA_API_KEY", "DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    harbor = str(harbor_venv() / "bin" / "harbor")
    daytona = ["--env", "harbor", "--harbor-env", "daytona", "--harbor", harbor]
    assert main([*_argv(history, out, _NO_QUALITY, easy=1), *daytona]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: harbor run failed (exit 1): Daytona requires "), error
    assert error.endswith(f"; the run stopped, resume with: selfbench run --resume {run_dir}\n")
    state = json.loads((run_dir / "candidates" / "pr-1.json").read_text())
    assert (state["status"], state["next"]) == ("active", "validate")
    assert _events(run_dir)[-1]["event"] == "stopped"
    assert not out.exists()
    assert main(["status", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "\nstopped: harbor run failed (exit 1): Daytona requires " in shown
    assert f"resume with: selfbench run --resume {run_dir}" in shown
    assert main(["status", str(run_dir), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["stopped"].startswith("harbor run failed (exit 1): Daytona requires ")
    assert status["tiers"][0]["stages"]["validate"] == 1
