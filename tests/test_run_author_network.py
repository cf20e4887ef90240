"""What author and reviewer commands may reach (`run --author-allow`, `--author-network`).

By default a command has a network namespace of its own: loopback, and only the endpoints of
its allow-list, relayed from the host (`selfbench.environments.egress`). The sandboxed tests run
a real probe as the author command against a real HTTP service the test starts on the host's
127.0.0.1: unreachable by default, reachable once allowed (and only the allowed port), and
reachable with `--author-network host`, today's host network.
"""

from __future__ import annotations

import http.server
import json
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from run_helpers import Sample, sample
from selfbench.cli import main
from selfbench.cli.run import AUTHOR_NETWORK_CHOICES
from selfbench.environments.egress import Endpoint
from selfbench.run import RunDirectory
from selfbench.run.author import AuthorJob, author_with_command
from selfbench.run.confine import AUTHOR_NETWORKS, AuthorNetwork
from selfbench.run.coupling import review_with_command
from test_run_author_options import bare_history

__all__ = ["bare_history"]  # a fixture these tests use

needs_unshare = pytest.mark.skipif(
    shutil.which("unshare") is None, reason="the author's network namespace needs unshare"
)

PROBE = """\
import json, socket, sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
review = sys.argv[1:2] == ["--review"]
seen = {}
for url in sys.argv[1 + review:]:
    try:
        with opener.open(url, timeout=20) as answer:
            seen[url] = answer.read().decode()
    except OSError as error:
        seen[url] = "unreached"
try:
    address = socket.gethostbyname("models.example.test")
    socket.create_connection((address, 80), timeout=20).close()
    seen["models.example.test:80"] = address
except OSError:
    seen["models.example.test:80"] = "unreached"
if review:
    print(json.dumps({"verdict": "coupled", "findings": [json.dumps(seen)]}))
else:
    print("SEEN " + json.dumps(seen))
"""


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"the host's service on {self.connection.getsockname()[1]}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        return


@pytest.fixture
def services() -> Iterator[tuple[str, str]]:
    """Two HTTP services on the host's 127.0.0.1 (the URLs), each answering with its port."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        first, second = (f"http://127.0.0.1:{s.server_address[1]}/" for s in servers)
        yield first, second
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def _answer(url: str) -> str:
    return f"the host's service on {url.rsplit(':', 1)[1].rstrip('/')}"


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return sample(tmp_path_factory.mktemp("sample"))


def _probe(tmp_path: Path) -> Path:
    probe = tmp_path / "bin" / "probe.py"  # its directory is bound: the command may read it
    probe.parent.mkdir()
    probe.write_text(PROBE, encoding="utf-8")
    return probe


def _job(drafted: Sample, tmp_path: Path, network: AuthorNetwork) -> AuthorJob:
    return AuthorJob(
        repo=drafted.repo.path,
        candidate=drafted.candidate,
        draft_dir=drafted.draft,
        out_dir=tmp_path / "out",
        log=tmp_path / "author.log",
        time_limit_sec=120,
        inactivity_sec=60,
        work_root=tmp_path / "work",
        network=network,
    )


def _seen_by_author(
    drafted: Sample, tmp_path: Path, network: AuthorNetwork, urls: tuple[str, ...]
) -> dict[str, str]:
    the_job = _job(drafted, tmp_path, network)
    result = author_with_command(f"{sys.executable} {_probe(tmp_path)} {' '.join(urls)}", the_job)
    assert result.reason == "author did not submit"
    log = the_job.log.read_text(encoding="utf-8")
    lines = [line for line in log.splitlines() if line.startswith("SEEN ")]
    assert len(lines) == 1, log
    seen: dict[str, str] = json.loads(lines[0].removeprefix("SEEN "))
    return seen


@pytest.mark.sandbox
@needs_unshare
def test_by_default_an_author_reaches_no_service_on_the_hosts_loopback(
    drafted: Sample, tmp_path: Path, services: tuple[str, str]
) -> None:
    seen = _seen_by_author(drafted, tmp_path, AuthorNetwork(), services)
    assert seen == {
        services[0]: "unreached",
        services[1]: "unreached",
        "models.example.test:80": "unreached",  # no name resolves
    }


@pytest.mark.sandbox
@needs_unshare
def test_an_allowed_endpoint_is_reached_and_nothing_else(
    drafted: Sample, tmp_path: Path, services: tuple[str, str]
) -> None:
    allowed, other = services
    network = AuthorNetwork(allowed=(allowed, "http://models.example.test"))
    seen = _seen_by_author(drafted, tmp_path, network, services)
    assert seen == {
        allowed: _answer(allowed),
        other: "unreached",  # the same host, another port: not on the list
        # the allowed name resolves to its own loopback address, where the forwarder listens
        # on the URL's own port, a privileged one
        "models.example.test:80": "127.0.0.2",
    }


@pytest.mark.sandbox
@needs_unshare
def test_with_the_host_network_an_author_reaches_the_hosts_loopback(
    drafted: Sample, tmp_path: Path, services: tuple[str, str]
) -> None:
    seen = _seen_by_author(drafted, tmp_path, AuthorNetwork("host"), services)
    assert seen[services[0]] == _answer(services[0])
    assert seen[services[1]] == _answer(services[1])


@pytest.mark.sandbox
@needs_unshare
def test_a_reviewer_has_the_authors_network(tmp_path: Path, services: tuple[str, str]) -> None:
    allowed, other = services
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    command = f"{sys.executable} {_probe(tmp_path)} --review {allowed} {other}"
    reviews = {}
    for name, network in (
        ("default", AuthorNetwork()),
        ("allowed", AuthorNetwork(allowed=(allowed,))),
    ):
        verdict = review_with_command(
            command, task_dir, tmp_path / f"{name}.log", 60, network=network
        )
        (finding,) = verdict.findings
        reviews[name] = json.loads(finding)
    assert (reviews["default"][allowed], reviews["default"][other]) == ("unreached", "unreached")
    assert (reviews["allowed"][allowed], reviews["allowed"][other]) == (
        _answer(allowed),
        "unreached",
    )


# --- the allow-list ----------------------------------------------------------------------------


def test_the_allow_list_is_the_urls_given_and_the_apis_the_variables_name() -> None:
    network = AuthorNetwork(allowed=("http://127.0.0.1:8080/v1", "https://api.anthropic.com"))
    environ = {
        "ANTHROPIC_API_KEY": "k",
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": "http://localhost:8000/v1",
        "GEMINI_API_KEY": "",  # set but empty: not given
    }
    assert network.endpoints((), environ) == (
        Endpoint("127.0.0.1", 8080),
        Endpoint("api.anthropic.com", 443),
    )
    names = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY")
    # a key: its API's own URL; the base URL variable, when the command gets it: that URL
    assert network.endpoints(names, environ) == (
        Endpoint("127.0.0.1", 8080),
        Endpoint("api.anthropic.com", 443),
        Endpoint("localhost", 8000),
    )
    # a base URL the command does not get is not the one it reaches
    assert AuthorNetwork().endpoints(("OPENAI_API_KEY",), environ) == (
        Endpoint("api.openai.com", 443),
    )
    assert AuthorNetwork("host", ()).endpoints(names, environ) == ()
    assert AUTHOR_NETWORK_CHOICES == AUTHOR_NETWORKS


def _run(repo: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--repo", str(repo), "--easy", "1", "--out", str(out), *extra]


@pytest.mark.parametrize(
    ("options", "environ", "message"),
    [
        (
            ("--author-allow", "ftp://models.internal/v1"),
            {},
            "--author-allow: not an http(s) URL with a host: 'ftp://models.internal/v1'",
        ),
        (
            ("--author-allow", "api.anthropic.com"),
            {},
            "--author-allow: not an http(s) URL with a host: 'api.anthropic.com'",
        ),
        (
            ("--author-allow", "http://127.0.0.1:port/"),
            {},
            "--author-allow: not an http(s) URL with a host: 'http://127.0.0.1:port/'",
        ),
        (
            ("--author-network", "host", "--author-allow", "https://"),
            {},
            "--author-allow: not an http(s) URL with a host: 'https://'",
        ),
        (
            ("--author-env", "OPENAI_BASE_URL"),
            {"OPENAI_BASE_URL": "localhost:8000"},
            "--author-env OPENAI_BASE_URL: not an http(s) URL with a host: 'localhost:8000'",
        ),
        (
            ("--author-env", "HTTPS_PROXY"),
            {"HTTPS_PROXY": "http://proxy.corp:3128"},
            (
                "--author-env HTTPS_PROXY: the allow-list's relays use the host's proxy "
                "themselves, the command cannot reach it (pass no proxy variable, or give "
                "--author-network host)"
            ),
        ),
        (
            ("--author-allow", "https://api.anthropic.com"),
            {"HTTPS_PROXY": "socks5://proxy.corp:1080"},
            (
                "the proxy for api.anthropic.com:443 is not an http:// URL with a host: "
                "'socks5://proxy.corp:1080' (only an HTTP proxy's CONNECT is supported)"
            ),
        ),
    ],
    ids=["scheme", "no-scheme", "port", "with-host", "base-url", "proxy-variable", "proxy"],
)
def test_an_endpoint_that_cannot_be_allowed_is_one_line_and_exit_2(
    tmp_path: Path,
    bare_history: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    options: tuple[str, ...],
    environ: dict[str, str],
    message: str,
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "bench.tar.gz"
    assert main(_run(bare_history, out, "--author", "agent --go", *options)) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "bench.run").exists()


def test_an_unknown_author_network_is_a_usage_error(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(bare_history, tmp_path / "b.tar.gz", "--author-network", "wide")) == 2
    assert "argument --author-network: invalid choice: 'wide'" in capsys.readouterr().err


def _said(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("author and reviewer")]


def test_the_run_says_once_what_authors_reach_and_keeps_the_options(
    tmp_path: Path,
    bare_history: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "bench.tar.gz"
    author = ("--author", "agent --go")
    given = ("--author-allow", "http://127.0.0.1:8080", "--author-env", "ANTHROPIC_API_KEY")
    assert main(_run(bare_history, out, *author, *given)) == 1
    assert _said(capsys.readouterr().out) == [
        (
            "author and reviewer commands reach only their allow-list: 127.0.0.1:8080, "
            "api.anthropic.com:443"
        )
    ]
    run_dir = (tmp_path / "bench.run").absolute()
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert inputs["authorAllow"] == ["http://127.0.0.1:8080"]
    assert "authorNetwork" not in inputs

    resume = ["run", "--resume", str(run_dir)]
    assert main([*resume, "--author-network", "host"]) == 1
    assert _said(capsys.readouterr().out) == [
        (
            "author and reviewer commands use the host's network (--author-network host): every "
            "host, services on the host's loopback too"
        )
    ]
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert (inputs["authorNetwork"], inputs["authorAllow"]) == ("host", ["http://127.0.0.1:8080"])
    changed = [e for e in RunDirectory(run_dir).events() if e["event"] == "changed"]
    assert [(e["option"], e["before"], e["after"]) for e in changed] == [
        ("author_network", "allow-list", "host")
    ]
    said = [str(e["line"]) for e in RunDirectory(run_dir).events() if e["event"] == "network"]
    assert said[1].startswith("author and reviewer commands use the host's network")
    assert len(said) == 2


def test_nothing_is_said_when_no_command_runs(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(bare_history, tmp_path / "bench.tar.gz")) == 1
    assert _said(capsys.readouterr().out) == []


def test_with_no_allowed_host_the_run_says_how_to_allow_one(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    assert main(_run(bare_history, out, "--reviewer", "review --now")) == 1
    assert _said(capsys.readouterr().out) == [
        (
            "author and reviewer commands reach no host: give --author-allow URL for their model's "
            "API (or --author-network host)"
        )
    ]
