"""The review page (SPEC §9): its server, and end to end in real headless Chromium.

The browser test starts `selfbench review` as a user would, drives Debian's Chromium through
Playwright (the system browser, never a downloaded one), reads a hostile task whose prompt and
gold patch carry markup and script, drops a task, writes the clean export, and verifies it.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from export_helpers import COMMIT, HOSTILE_PROMPT, author_collected, report
from harbor_env import run_in_harbor_venv
from selfbench.cli import main
from selfbench.demo import build_sample_repository
from selfbench.export import RunInfo, export_run, verify_export
from selfbench.review import ReviewServer, open_review

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


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of three accepted tasks (one hostile); a fourth was rejected by validation."""
    root = tmp_path_factory.mktemp("review")
    sample = build_sample_repository(root)
    inputs = [
        author_collected(root, sample, "slug-hostile", hostile=True),
        author_collected(root, sample, "slug-plain"),
        author_collected(root, sample, "slug-zeta", difficulty="hard"),
        author_collected(root, sample, "slug-rejected"),
    ]
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
    assert summary["tasks"][1]["audit"]["metrics"] == {
        "implementationFiles": 3,
        "implementationChangedLines": 72,
        "testFiles": 2,
    }


def test_a_task_detail_carries_prompt_definition_and_both_patches(server: ReviewServer) -> None:
    detail = _get(server.url + "api/tasks/slug-hostile")
    assert detail["prompt"] == HOSTILE_PROMPT.strip() + "\n"
    assert detail["definition"]["taskId"] == "slug-hostile"
    assert detail["validation"]["accepted"] is True
    assert '+<script>window.__pwned = "gold"</script>' in detail["goldPatch"]["text"]
    assert detail["testPatch"]["text"].startswith("diff --git a/tests/")
    assert detail["goldPatch"]["omittedBytes"] == 0


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


def _read_hostile_task(page: Page) -> None:
    page.locator("tr.task", has_text="slug-hostile").click()
    page.wait_for_selector("#detail h2")
    assert page.locator("#detail h2").text_content() == "slug-hostile"
    assert page.locator("pre.prompt").text_content() == HOSTILE_PROMPT.strip() + "\n"
    gold = page.locator(".diff").first
    added = gold.locator("span.add", has_text="window.__pwned")
    assert added.first.text_content() == '+<script>window.__pwned = "gold"</script>'
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#detail img, #detail script, #detail b").count() == 0


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
            plain = page.locator("tr.task", has_text="slug-plain").inner_text()
            assert "3 files · 72 lines · 2 test files" in plain
            _read_hostile_task(page)
            page.screenshot(path=str(tmp_path / "review.png"))
            page.locator(".diff").first.screenshot(path=str(tmp_path / "gold-diff.png"))
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
        for name in ("review.png", "gold-diff.png"):
            shutil.copyfile(tmp_path / name, Path(keep) / name)
