"""The review page (SPEC §9): its server, and end to end in real headless Chromium.

The browser test starts `selfbench review` as a user would, drives Debian's Chromium through
Playwright (the system browser, never a downloaded one), reads a hostile task whose prompt and
gold patch carry markup and script, drops a task, writes the clean export, and verifies it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from export_helpers import (
    COMMIT,
    HOSTILE_PROMPT,
    RawMember,
    author_collected,
    gzip_tar,
    members_of,
    quality_record,
    report,
)
from harbor_env import run_in_harbor_venv
from selfbench.artifacts.quality_record import write_quality
from selfbench.cli import main
from selfbench.demo import build_sample_repository
from selfbench.errors import ArchiveError, ExportError
from selfbench.export import REVIEW_FILE, RunInfo, export_run, verify_export
from selfbench.review import ReviewServer, load_review, open_review
from selfbench.review import data as data_module
from selfbench.review import server as review_server
from selfbench.review._peer import peer_uid

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
KEPT = ("slug-hostile", "slug-plain", "slug-zeta")
HOSTILE_REASON = '<img src=x onerror="window.__pwned=3">weak tests: mutation score 50%'
HOSTILE_QUALITY = quality_record("slug-hostile", "review").model_copy(
    update={"reasons": (HOSTILE_REASON, "the instruction does not name slugify")}
)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of three accepted tasks (one hostile); a fourth was rejected by validation.
    The hostile task's quality verdict is `review` (a reason carries markup), slug-zeta's
    `ship`; slug-plain, as an older task, has no quality record."""
    root = tmp_path_factory.mktemp("review")
    sample = build_sample_repository(root)
    inputs = [
        author_collected(root, sample, "slug-hostile", hostile=True),
        author_collected(root, sample, "slug-plain"),
        author_collected(root, sample, "slug-zeta", difficulty="hard"),
        author_collected(root, sample, "slug-rejected"),
    ]
    write_quality(inputs[0], HOSTILE_QUALITY)
    write_quality(inputs[2], quality_record("slug-zeta", "ship"))
    reports = root / "validation.json"
    entries = [report(task_id, accepted=True) for task_id in KEPT]
    entries.append(report("slug-rejected", accepted=False, reason="oracle: reward 0"))
    reports.write_text(json.dumps(entries), encoding="utf-8")
    out = root / "run.tar.gz"
    run = RunInfo("run-42", "https://example.com/acme/slugkit.git", COMMIT)
    export_run(inputs, run=run, out=out, validation=[reports])
    return out


@pytest.fixture
def server(export: Path, tmp_path: Path) -> Iterator[ReviewServer]:
    with open_review(export, clean_out=tmp_path / "clean.tar.gz").start() as running:
        yield running


def _get(url: str) -> Any:
    with urllib.request.urlopen(url) as response:  # noqa: S310 - a loopback http URL
        return json.loads(response.read())


def _request(
    server: ReviewServer, method: str, path: str, *, headers: dict[str, str], body: bytes = b""
) -> tuple[int, bytes, http.client.HTTPResponse]:
    port = int(server.url.rstrip("/").rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body or None, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), response
    finally:
        connection.close()


# --- the server --------------------------------------------------------------------------------


def test_the_summary_lists_the_run_and_every_task(server: ReviewServer) -> None:
    summary = _get(server.url + "api/export")
    assert summary["manifest"]["runId"] == "run-42"
    assert summary["manifest"]["candidateCounts"] == {"easy": 0, "medium": 3, "hard": 1}
    assert summary["manifest"]["acceptedCount"] == 3
    assert [task["taskId"] for task in summary["tasks"]] == list(KEPT)
    assert [task["difficulty"] for task in summary["tasks"]] == ["medium", "medium", "hard"]
    assert {task["verdict"] for task in summary["tasks"]} == {"accepted"}
    assert [task["quality"] for task in summary["tasks"]] == [
        {"verdict": "review", "reasons": list(HOSTILE_QUALITY.reasons)},
        None,
        {"verdict": "ship", "reasons": []},
    ]
    assert summary["tasks"][1]["audit"]["metrics"] == {
        "implementationFiles": 3,
        "implementationChangedLines": 72,
        "testFiles": 2,
    }


def test_a_task_detail_carries_prompt_definition_patches_and_what_runs(
    server: ReviewServer,
) -> None:
    detail = _get(server.url + "api/tasks/slug-hostile")
    assert detail["prompt"] == HOSTILE_PROMPT.strip() + "\n"
    assert detail["definition"]["taskId"] == "slug-hostile"
    assert detail["validation"]["accepted"] is True
    assert '+<script>window.__pwned = "gold"</script>' in detail["goldPatch"]["text"]
    assert detail["testPatch"]["text"].startswith("diff --git a/tests/")
    assert detail["goldPatch"]["omittedBytes"] == 0
    assert detail["verifierScript"]["text"].startswith("#!/bin/bash\n# The selfbench verifier.")
    for key in ("agentDockerfile", "verifierDockerfile"):
        assert detail[key]["text"].startswith("FROM ubuntu:24.04\n")
        assert detail[key]["omittedBytes"] == 0
    assert 'allowed_hosts = [\n    "chatgpt.com",' in detail["taskToml"]["text"]
    assert detail["quality"] == HOSTILE_QUALITY.model_dump(mode="json", by_alias=True)
    assert _get(server.url + "api/tasks/slug-plain")["quality"] is None


def test_every_response_forbids_inline_script_and_other_origins(server: ReviewServer) -> None:
    status, _, response = _request(server, "GET", "/", headers={})
    assert status == 200
    policy = response.getheader("Content-Security-Policy") or ""
    assert "script-src 'self'" in policy
    assert "default-src 'none'" in policy
    assert response.getheader("X-Content-Type-Options") == "nosniff"


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/api/tasks/nope", {}, 404),
        ("GET", "/api/tasks/..%2f..%2fetc%2fpasswd", {}, 404),
        ("GET", "/api/export", {"Host": "evil.example:80"}, 403),
        ("POST", "/api/clean-export", {"Content-Type": "application/json"}, 403),
        ("POST", "/api/clean-export", {"X-Selfbench-Token": "guess"}, 403),
    ],
)
def test_the_server_refuses_what_a_page_of_another_origin_could_send(
    server: ReviewServer, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    body = b'{"drop": []}' if method == "POST" else b""
    got, _, _ = _request(server, method, path, headers=headers, body=body)
    assert got == status
    assert not server.clean_out.exists()


def test_review_refuses_a_hostile_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "bad.tar.gz"
    archive.write_bytes(b"\x1f\x8b not really")
    assert main(["review", str(archive)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {archive}: not a valid gzip stream")


def _raw_request(server: ReviewServer, request: str, *, uid: int) -> tuple[int, bytes]:
    """Send `request` to the server from a process of `uid` and gid `uid` (bash's `/dev/tcp`,
    which any user can run; starting it as another user takes root); the response's status and
    body."""
    port = server.url.rstrip("/").rsplit(":", 1)[1]
    send = 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf %s "$2" >&3 && cat <&3'
    done = subprocess.run(
        ["bash", "-c", send, "client", port, request],
        capture_output=True,
        timeout=30,
        check=True,
        cwd="/",
        user=uid,
        group=uid,
        extra_groups=[],
    )
    head, _, body = done.stdout.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


OTHER_USERS_REQUESTS = [  # method, path, body, and the owner's status for the same request
    ("GET", "/", "", 200),
    ("GET", "/api/export", "", 200),
    ("GET", "/api/tasks/slug-hostile", "", 200),
    ("GET", "/static/review.js", "", 200),
    ("GET", "/nowhere", "", 404),
    ("HEAD", "/", "", 501),
    ("POST", "/api/clean-export", '{"drop": []}', 200),
]


@pytest.mark.parametrize(("method", "path", "body", "owners"), OTHER_USERS_REQUESTS)
def test_another_user_gets_403_and_nothing_else(
    server: ReviewServer, other_uid: int, method: str, path: str, body: str, owners: int
) -> None:
    """Not the page, its data or its token, and no clean export even with the right token: any
    local user can reach 127.0.0.1, so the server answers its owner only."""
    port = server.url.rstrip("/").rsplit(":", 1)[1]
    token = _token(server)
    request = (
        f"{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nX-Selfbench-Token: {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    )
    status, answer = _raw_request(server, request, uid=other_uid)
    assert (status, answer) == (
        403,
        b'{"error": "this review page serves only the user who started it"}',
    )
    assert not server.clean_out.exists()
    assert _raw_request(server, request, uid=os.geteuid())[0] == owners


def test_a_connection_whose_user_cannot_be_found_gets_403(
    server: ReviewServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a system without the kernel's TCP tables: no owner found, nothing served."""
    unlisted = [tmp_path / "no-such-table"]
    monkeypatch.setattr(review_server, "peer_uid", lambda c: peer_uid(c, tables=unlisted))
    status, answer, _ = _request(server, "GET", "/", headers={})
    assert (status, json.loads(answer)) == (
        403,
        {"error": "cannot tell which user opened this connection; only the page's owner is served"},
    )


def _token(server: ReviewServer) -> str:
    _, page, _ = _request(server, "GET", "/", headers={})
    found = re.search(rb'name="selfbench-token" content="([^"]+)"', page)
    assert found is not None
    return found.group(1).decode()


def _write(server: ReviewServer, body: bytes, **headers: str) -> tuple[int, Any]:
    sent = {"X-Selfbench-Token": _token(server), "Content-Type": "application/json", **headers}
    status, answer, _ = _request(server, "POST", "/api/clean-export", headers=sent, body=body)
    return status, json.loads(answer)


def test_a_task_detail_shows_only_what_it_lists(server: ReviewServer) -> None:
    """Extra keys in a review record (kept on disk) never reach the page or override fields."""
    record_path = server.data.root / "slug-plain" / REVIEW_FILE
    record = json.loads(record_path.read_bytes())
    record.update(prompt="<b>forged</b>", difficulty="easy", taskId="slug-hostile", extra=1)
    record_path.write_text(json.dumps(record), encoding="utf-8")
    detail = _get(server.url + "api/tasks/slug-plain")
    assert set(detail) == {
        "quality",
        *("taskId", "difficulty", "prompt", "promptBytes", "promptOmittedBytes", "definition"),
        *("validation", "audit", "goldPatch", "testPatch"),
        *("verifierScript", "agentDockerfile", "verifierDockerfile", "taskToml"),
    }
    instruction = server.data.root / "slug-plain" / "instruction.md"
    assert detail["prompt"] == instruction.read_text(encoding="utf-8")
    assert (detail["taskId"], detail["difficulty"]) == ("slug-plain", "medium")


@pytest.mark.parametrize("length", ["abc", "-5", "", "99999999999"])
def test_a_malformed_content_length_is_a_bad_request(server: ReviewServer, length: str) -> None:
    status, answer = _write(server, b'{"drop": []}', **{"Content-Length": length})
    assert (status, answer) == (400, {"error": "Content-Length must be 1 to 1048576"})
    assert not server.clean_out.exists()


def test_the_clean_export_refuses_an_export_swapped_after_loading(
    export: Path, tmp_path: Path
) -> None:
    source = tmp_path / "run.tar.gz"
    shutil.copyfile(export, source)
    with open_review(source, clean_out=tmp_path / "clean.tar.gz").start() as running:
        members = members_of(source.read_bytes())  # another sound export, one task fewer
        manifest = json.loads(members[0].data)
        manifest["tasks"] = manifest["tasks"][1:]
        manifest["acceptedCount"] = 2
        members = [RawMember("manifest.json", json.dumps(manifest).encode()), *members[1:2]]
        members += members_of(export.read_bytes())[3:]
        source.write_bytes(gzip_tar(members))
        verify_export(source)
        status, answer = _write(running, b'{"drop": []}')
        assert status == 409
        assert answer["error"] == (
            f"{source}: manifest.json: not the export that was loaded for review (the file "
            "changed since); nothing written"
        )
        assert not running.clean_out.exists()
        assert sorted(path.name for path in tmp_path.iterdir()) == ["run.tar.gz"]


def test_a_clean_export_that_does_not_verify_is_removed(
    server: ReviewServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, **_: Any) -> None:
        raise ArchiveError(f"{path}: simulated")

    monkeypatch.setattr(review_server, "read_export", refuse)
    status, answer = _write(server, b'{"drop": ["slug-plain"]}')
    assert status == 400
    assert answer["error"] == (
        f"the clean export did not verify and was removed: {server.clean_out}: simulated"
    )
    assert not server.clean_out.exists()


@pytest.mark.parametrize("spelling", ["dotdot", "symlink"])
def test_review_refuses_a_clean_export_that_is_its_source(
    export: Path, tmp_path: Path, spelling: str
) -> None:
    source = tmp_path / "run.tar.gz"
    shutil.copyfile(export, source)
    (tmp_path / "sub").mkdir()
    out = tmp_path / "sub" / ".." / "run.tar.gz"
    if spelling == "symlink":
        out = tmp_path / "sub" / "clean.tar.gz"
        out.symlink_to(source)
    with pytest.raises(ExportError) as caught:
        open_review(source, clean_out=out)
    assert str(caught.value) == f"a clean export must not replace its source: {out}"


def test_only_the_shown_part_of_a_patch_is_kept(
    export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(data_module, "PATCH_SHOWN_BYTES", 100)
    data = load_review(export)
    try:
        kept = data.root / "slug-plain"
        assert all(path.stat().st_size <= 100 for path in kept.iterdir() if "patch" in path.name)
        assert (kept / "instruction.md").stat().st_size <= 100
        detail = json.loads(json.dumps(data.detail("slug-plain")))  # as the page gets it
        assert detail is not None
        gold = detail["goldPatch"]
        assert len(gold["text"]) == 100
        assert gold["bytes"] > 100
        assert gold["omittedBytes"] == gold["bytes"] - 100
        assert detail["promptOmittedBytes"] == detail["promptBytes"] - 100
    finally:
        data.close()


# --- end to end in Chromium --------------------------------------------------------------------


@pytest.fixture
def review_process(export: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`selfbench review` running as a user starts it; yields its URL and clean-export path."""
    clean = tmp_path / "clean.tar.gz"
    temp = tmp_path / "temp"  # the server's private files go here, and must be gone after it
    temp.mkdir()
    command = [sys.executable, "-m", "selfbench", "review", str(export), "--out", str(clean)]
    environment = {**os.environ, "TMPDIR": str(temp)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith(f"Reviewing {export} at http://127.0.0.1:"), first
        assert list(temp.iterdir()) != []
        yield first.split(" at ", 1)[1].strip(), clean
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        if process.stdout is not None:
            process.stdout.close()
    assert list(temp.iterdir()) == []


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("Chromium is missing: run ./scripts/system-deps.sh (apt package chromium)")
    return found


def _read_quality_first(page: Page) -> None:
    """The quality verdict and its reasons are the first section of a task, before its prompt."""
    sections = page.locator("#detail > *")
    assert sections.nth(0).evaluate("node => node.tagName") == "H2"
    block = sections.nth(1)
    assert block.evaluate("node => node.className") == "quality"
    assert sections.nth(2).text_content() == "Prompt"
    assert block.locator("h3").text_content() == "Quality: review"
    assert block.locator("ul.quality-reasons li").all_text_contents() == list(
        HOSTILE_QUALITY.reasons
    )
    facts = dict(
        zip(
            block.locator("dt").all_text_contents(),
            block.locator("dd").all_text_contents(),
            strict=True,
        )
    )
    assert facts == {
        "Mutation score": "2/4 killed (50%)",
        "Unneeded parts": "src/slugkit/core.py#1",
        "Moved out of the gold": "CHANGELOG.md",
        "Pass-to-pass basis": "coverage: 2 tests execute the changed lines (1 selected)",
        "Missing from the instruction": "slugify",
        "Added dependencies": "unidecode (pyproject.toml)",
    }


def _read_hostile_task(page: Page) -> None:
    page.locator("tr.task", has_text="slug-hostile").click()
    page.wait_for_selector("#detail h2")
    assert page.locator("#detail h2").text_content() == "slug-hostile"
    _read_quality_first(page)
    assert page.locator("pre.prompt").text_content() == HOSTILE_PROMPT.strip() + "\n"
    gold = page.locator(".diff").first
    added = gold.locator("span.add", has_text="window.__pwned")
    assert added.first.text_content() == '+<script>window.__pwned = "gold"</script>'
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#detail img, #detail script, #detail b").count() == 0
    script = page.locator("pre.verifier-script").text_content() or ""
    assert script.startswith("#!/bin/bash\n# The selfbench verifier.")
    for name in ("agent-dockerfile", "verifier-dockerfile"):
        assert (page.locator(f"pre.{name}").text_content() or "").startswith("FROM ubuntu:24.04\n")
    assert 'schema_version = "1.4"' in (page.locator("pre.task-toml").text_content() or "")


def _hand_to_harbor(clean: Path, tasks: Path) -> None:
    """The clean export, extracted, is a tasks directory Harbor's loader takes whole."""
    assert main(["extract", str(clean), "--out", str(tasks)]) == 0
    probe = (
        "import sys, warnings; warnings.simplefilter('error')\n"
        "from pathlib import Path\nfrom harbor.models.task.task import Task\n"
        "print(sorted(Task(d).name for d in Path(sys.argv[1]).iterdir() if Task.is_valid_dir(d)))"
    )
    loaded = run_in_harbor_venv("python", "-c", probe, str(tasks))
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout == "['selfbench/slug-hostile', 'selfbench/slug-zeta']\n"


@pytest.mark.harbor
def test_review_in_chromium_drops_a_task_and_writes_a_verified_clean_export(
    tmp_path: Path, review_process: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, clean = review_process
    profile = tmp_path / "chromium-profile"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=_chromium(),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 900},
        )
        try:
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]")
            run = page.locator("#run").inner_text()
            assert "run-42" in run
            assert COMMIT in run
            assert "easy 0 · medium 3 · hard 1" in run
            assert page.locator("tr.task td.id").all_text_contents() == list(KEPT)
            assert page.locator("tr.task td.verdict").all_text_contents() == ["accepted"] * 3
            qualities = page.locator("tr.task td.quality").all_text_contents()
            assert qualities == ["review", "not checked", "ship"]
            plain = page.locator("tr.task", has_text="slug-plain").inner_text()
            assert "3 files · 72 lines · 2 test files" in plain
            _read_hostile_task(page)
            page.screenshot(path=str(tmp_path / "review.png"))
            page.locator(".diff").first.screenshot(path=str(tmp_path / "gold-diff.png"))
            page.locator("pre.verifier-script").scroll_into_view_if_needed()
            page.locator("pre.verifier-script").screenshot(path=str(tmp_path / "scripts.png"))
            page.locator("tr.task", has_text="slug-plain").locator("td.id").click()
            page.wait_for_selector("#detail h2:has-text('slug-plain')")
            older = page.locator("#detail section.quality h3").text_content()
            assert older == "Quality: not checked"
            page.locator("tr.task", has_text="slug-plain").locator("button.toggle").click()
            page.locator("tr.task", has_text="slug-zeta").locator("button.toggle").click()
            page.locator("tr.task", has_text="slug-zeta").locator("button.toggle").click()
            assert page.locator("#write").text_content() == "Write clean export (2 of 3 tasks)"
            page.locator("#write").click()
            page.wait_for_selector("#status:has-text('Wrote')")
            assert page.locator("#status").text_content() == (f"Wrote {clean} (2 tasks, verified).")
            assert errors == []
        finally:
            context.close()
    assert (tmp_path / "review.png").stat().st_size > 20_000
    assert main(["verify", str(clean)]) == 0
    assert capsys.readouterr().out == (
        f"Verified {clean}: run run-42, 2 tasks (candidates: easy 0, medium 3, hard 1)\n"
    )
    kept = [task.task_id for task in verify_export(clean).manifest.tasks]
    assert kept == ["slug-hostile", "slug-zeta"]
    _hand_to_harbor(clean, tmp_path / "tasks")
    keep = os.environ.get("SELFBENCH_KEEP_SCREENSHOTS")  # a directory to look at them in
    if keep:
        for name in ("review.png", "gold-diff.png", "scripts.png"):
            shutil.copyfile(tmp_path / name, Path(keep) / name)
