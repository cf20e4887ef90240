"""The host's network configuration reaches setup, and a setup the network failed stops the
command instead of rejecting the candidate (`selfbench.environments.local.host_network`).

The sandbox tests serve a package index over HTTPS from a test host of their own: a network
namespace joined to this one by a veth pair (198.18.0.0/15, the benchmarking range), its
certificate signed by a private CA the test makes. Setup reaches it through the sandbox's own
network (slirp4netns, which does not reach the host's loopback), as it would a registry behind
a company's TLS-inspecting proxy.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from run_history import generate
from selfbench.cli import main
from selfbench.environments.local.host_network import (
    CA_DIRECTORY_VARIABLES,
    CA_FILE_VARIABLES,
    CONTAINER_CA_BUNDLE,
    PROXY_VARIABLES,
    TRUST_VARIABLES,
    HostNetwork,
    network_failure,
    parse_certificates,
)
from selfbench.environments.local.sandbox import Mounts, Sandbox, Users, require_sandbox
from selfbench.toolchains.install import PackageRegistries
from selfbench.toolchains.model import components
from selfbench.toolchains.resolve import toolchain_cache

pytestmark = pytest.mark.fresh_setup  # the network reaches setups that really run

# --- certificates ------------------------------------------------------------------------------

_BODY = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    min_size=4,
    max_size=200,
)


def _pem(body: str) -> bytes:
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return (
        "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"
    ).encode()


@given(
    bodies=st.lists(_BODY, min_size=0, max_size=6),
    noise=st.lists(st.text(alphabet=" #abc\n:=", max_size=40), min_size=7, max_size=7),
    crlf=st.booleans(),
)
def test_certificates_are_found_in_order_once_each_whatever_surrounds_them(
    bodies: list[str], noise: list[str], crlf: bool
) -> None:
    blocks = [_pem(body) for body in bodies]
    data = noise[0].encode()
    for block, text in zip(blocks, noise[1:], strict=False):
        shown = block.replace(b"\n", b"\r\n") if crlf else block
        data += b"\n" + shown + b"\n" + text.encode()
    assert parse_certificates(data + data) == tuple(dict.fromkeys(blocks))


def test_keys_and_other_blocks_are_not_certificates() -> None:
    key = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    assert parse_certificates(key + _pem("QUJD")) == (_pem("QUJD"),)


# --- detect ------------------------------------------------------------------------------------


def test_every_ca_variable_in_either_case_gives_one_bundle_and_says_where_from(
    tmp_path: Path,
) -> None:
    first, second = _pem("Rmlyc3Q="), _pem("U2Vjb25k")
    (tmp_path / "one.pem").write_bytes(first)
    (tmp_path / "both.pem").write_bytes(first + b"\n" + second)
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "a.crt").write_bytes(second)
    environ = {
        "SSL_CERT_FILE": str(tmp_path / "one.pem"),
        "node_extra_ca_certs": str(tmp_path / "both.pem"),
        "SSL_CERT_DIR": f"{tmp_path / 'missing'}:{certs}",
        "PIP_CERT": str(tmp_path / "missing.pem"),  # names nothing: not carried
        "HOME": "/root",
    }
    found = HostNetwork.detect(environ)
    assert found.certificates == (first, second)
    assert found.ca_sources == ("SSL_CERT_FILE", "node_extra_ca_certs", "SSL_CERT_DIR")
    assert found.summary() == (
        "setup trusts the host's CA bundle (SSL_CERT_FILE, node_extra_ca_certs, SSL_CERT_DIR)",
    )
    assert found.bundle() == first + b"\n" + second + b"\n"
    assert found.environment() == dict.fromkeys(TRUST_VARIABLES, CONTAINER_CA_BUNDLE)


@pytest.mark.parametrize("name", [*CA_FILE_VARIABLES, *(n.lower() for n in CA_FILE_VARIABLES)])
def test_any_one_ca_file_variable_is_enough(tmp_path: Path, name: str) -> None:
    (tmp_path / "ca.pem").write_bytes(_pem("T25l"))
    found = HostNetwork.detect({name: str(tmp_path / "ca.pem")})
    assert found.certificates == (_pem("T25l"),)
    assert found.environment()["NODE_EXTRA_CA_CERTS"] == CONTAINER_CA_BUNDLE
    assert found.environment()["SSL_CERT_FILE"] == CONTAINER_CA_BUNDLE


def test_proxies_are_passed_in_both_spellings_and_nothing_is_carried_without_variables() -> None:
    environ = {"https_proxy": "http://proxy.internal:3128", "NO_PROXY": "localhost,.corp"}
    found = HostNetwork.detect(environ)
    assert found.environment() == {
        "HTTPS_PROXY": "http://proxy.internal:3128",
        "https_proxy": "http://proxy.internal:3128",
        "NO_PROXY": "localhost,.corp",
        "no_proxy": "localhost,.corp",
    }
    assert found.summary() == ("setup uses the host's proxy (HTTPS_PROXY, NO_PROXY)",)
    assert HostNetwork.detect({"PATH": "/usr/bin"}).empty
    assert set(PROXY_VARIABLES) == {"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}
    assert CA_DIRECTORY_VARIABLES == ("SSL_CERT_DIR",)


# --- failures ----------------------------------------------------------------------------------

FAILURE_LINES = [
    # (the tool, a line it prints, the kind)
    ("uv", "  Caused by: invalid peer certificate: UnknownIssuer", "tls"),
    ("pip", ("Could not fetch URL https://ix.example/simple/six/: There was a problem confirming "
     "the ssl certificate: HTTPSConnectionPool(...): Max retries exceeded (Caused by "
     "SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
     "verify failed: self-signed certificate in certificate chain (_ssl.c:1006)')))"), "tls"),
    ("pip", ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, "
     "status=None)) after connection broken by 'SSLError(SSLCertVerificationError(1, "
     "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed')))': /simple/six/"), "tls"),
    ("npm", "npm error code SELF_SIGNED_CERT_IN_CHAIN", "tls"),
    ("corepack", "Error: self-signed certificate in certificate chain", "tls"),
    ("yarn", "error Error: unable to get local issuer certificate", "tls"),
    ("npm", "npm ERR! code UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "tls"),
    ("go", ('go: github.com/x/y@v1.0.0: Get "https://proxy.golang.org/...": tls: failed to '
     "verify certificate: x509: certificate signed by unknown authority"), "tls"),
    ("cargo", ("  [60] SSL peer certificate or SSH remote key was not OK (SSL certificate "
     "problem: self signed certificate in certificate chain)"), "tls"),
    ("pip", ("ERROR: Could not install packages due to an OSError: HTTPSConnectionPool("
     "host='files.example', port=443): Max retries exceeded with url: /x (Caused by "
     "NewConnectionError('<...>: Failed to establish a new connection: [Errno -3] Temporary "
     "failure in name resolution'))"), "dns"),
    ("npm", ("npm error request to https://registry.example/x failed, reason: getaddrinfo "
     "EAI_AGAIN registry.example"), "dns"),
    ("uv", ("  Caused by: dns error: failed to lookup address information: Name or service not "
     "known"), "dns"),
    ("npm", "npm error code ECONNREFUSED", "refused"),
    ("curl", "curl: (7) Failed to connect to 10.1.2.3 port 3128: Connection refused", "refused"),
    ("go", "dial tcp 142.250.1.1:443: i/o timeout", "timeout"),
    ("npm", "npm error code ETIMEDOUT", "timeout"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "line", "kind"), FAILURE_LINES)
def test_a_network_failure_is_recognised_in_each_tools_words(
    tool: str, line: str, kind: str
) -> None:
    log = f"+ {tool} install\nResolving dependencies\n{line}\nexit 1\n"
    failure = network_failure(log)
    assert failure is not None, tool
    assert (failure.kind, failure.line) == (kind, " ".join(line.split())[:300])
    assert ("SSL_CERT_FILE" in failure.fix()) == (kind == "tls")


NOT_NETWORK = [
    (
        "ERROR: Could not find a version that satisfies the requirement nosuchpkg (from versions: "
        "none)"
    ),
    "ERROR: No matching distribution found for nosuchpkg",
    "npm error code E404",
    "  x No solution found when resolving dependencies:",
    "ModuleNotFoundError: No module named 'setuptools'",
    "error: subprocess-exited-with-error",
    # a retried time-out that a later try made good: the failure is elsewhere
    (
        "WARNING: Retrying (Retry(total=4)) after connection broken by 'ReadTimeoutError(\"Read "
        "timed out. (read timeout=15)\")': /simple/six/"
    ),
    "npm WARN fetch retrying ECONNRESET, ETIMEDOUT",
]


@pytest.mark.parametrize("line", NOT_NETWORK)
def test_a_project_failure_is_not_taken_for_the_network(line: str) -> None:
    assert network_failure(f"installing\n{line}\nexit 1\n") is None


# --- a private registry on a test host ---------------------------------------------------------

needs_ip = pytest.mark.skipif(shutil.which("ip") is None, reason="a test host needs iproute2")

_PORT = 8443


@dataclass(frozen=True)
class PrivateRegistry:
    """A PEP 503 index and an npm registry over HTTPS on a test host, and its CA."""

    url: str
    ca: Path
    """The private CA's certificate (PEM)."""
    trusting: Path
    """The host's own bundle with the private CA added: what a company's SSL_CERT_FILE holds."""


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_certificates(directory: Path, address: str) -> None:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.pem", "-days", "2", "-subj", "/CN=selfbench test CA", "-addext",
             "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
             cwd=directory)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
             "server.csr", "-subj", f"/CN={address}", cwd=directory)  # fmt: skip
    (directory / "ext.cnf").write_text(
        f"subjectAltName=IP:{address}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    )
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf",
             cwd=directory)  # fmt: skip


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _wheel() -> bytes:
    files = {
        "sbdemo/__init__.py": b"VALUE = 42\n",
        "sbdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sbdemo\nVersion: 1.0\n",
        "sbdemo-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: selfbench-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = "".join(f"{n},{_record_hash(d)},{len(d)}\n" for n, d in files.items())
    record += "sbdemo-1.0.dist-info/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**files, "sbdemo-1.0.dist-info/RECORD": record.encode()}.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _npm_tarball() -> bytes:
    files = {
        "package/package.json": b'{"name": "sbdemo", "version": "1.0.0", "main": "index.js"}\n',
        "package/index.js": b"module.exports = 42;\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1767571200
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _write_registry(www: Path, url: str) -> None:
    wheel = _wheel()
    (www / "simple" / "sbdemo").mkdir(parents=True)
    (www / "sbdemo-1.0-py3-none-any.whl").write_bytes(wheel)
    link = f"../../sbdemo-1.0-py3-none-any.whl#sha256={hashlib.sha256(wheel).hexdigest()}"
    (www / "simple" / "sbdemo" / "index.html").write_text(
        f'<!DOCTYPE html><html><body><a href="{link}">sbdemo-1.0-py3-none-any.whl</a>'
        "</body></html>\n"
    )
    tarball = _npm_tarball()
    (www / "sbdemo-npm").mkdir()
    (www / "sbdemo-npm" / "sbdemo-1.0.0.tgz").write_bytes(tarball)
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    version = {
        "name": "sbdemo",
        "version": "1.0.0",
        "dist": {
            "tarball": f"{url}/sbdemo-npm/sbdemo-1.0.0.tgz",
            "shasum": hashlib.sha1(tarball).hexdigest(),  # noqa: S324 - npm's own field
            "integrity": integrity,
        },
    }
    packument = {"name": "sbdemo", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": version}}
    (www / "sbdemo").write_text(json.dumps(packument))


_SERVER = """\
import functools, http.server, ssl, sys
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[3], sys.argv[4])
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[5])
server = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("serving", flush=True)
server.serve_forever()
"""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def private_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRegistry]:
    """The registry on its test host, for the module's tests; the host removed afterwards."""
    directory = tmp_path_factory.mktemp("registry")
    tag = f"{os.getpid() % 100000}"
    namespace, outside, inside = f"sbreg{tag}", f"sbh{tag}", f"sbn{tag}"
    subnet = 4 * (os.getpid() % 60)
    host, address = f"198.18.77.{subnet + 1}", f"198.18.77.{subnet + 2}"
    _make_certificates(directory, address)
    url = f"https://{address}:{_PORT}"
    _write_registry(directory / "www", url)
    server = None
    _ip("netns", "add", namespace)
    try:
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", namespace)
        _ip("addr", "add", f"{host}/30", "dev", outside)
        _ip("link", "set", outside, "up")
        for args in (("addr", "add", f"{address}/30", "dev", inside), ("link", "set", inside, "up"),
                     ("link", "set", "lo", "up")):  # fmt: skip
            _ip("netns", "exec", namespace, "ip", *args)
        server = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                namespace,
                sys.executable,
                "-c",
                _SERVER,
                address,
                str(_PORT),
                str(directory / "server.pem"),
                str(directory / "server.key"),
                str(directory / "www"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert server.stdout is not None
        assert server.stdout.readline() == b"serving\n"
        trusting = directory / "trusting.pem"
        system = Path("/etc/ssl/certs/ca-certificates.crt")
        host_bundle = system.read_bytes() if system.is_file() else b""
        trusting.write_bytes(host_bundle + b"\n" + (directory / "ca.pem").read_bytes())
        yield PrivateRegistry(url, directory / "ca.pem", trusting)
    finally:
        if server is not None:
            server.kill()
            server.wait()
            if server.stdout is not None:
                server.stdout.close()
        subprocess.run(["ip", "netns", "del", namespace], check=False, capture_output=True)
        subprocess.run(["ip", "link", "del", outside], check=False, capture_output=True)


def _uv() -> Path:
    """uv at the image's version, as the toolchains install it (from PyPI, cached)."""
    component = components(["uv"])[0]
    entry = PackageRegistries().install(component, toolchain_cache())
    assert entry is not None, "uv could not be installed from PyPI"
    return entry / "bin" / "uv"


def _setup_commands(url: str) -> dict[str, str]:
    return {
        "pip": f"python3 -m venv /tmp/v && /tmp/v/bin/pip install --no-cache-dir --index-url "
        f"{url}/simple/ sbdemo && /tmp/v/bin/python -c 'import sbdemo; print(sbdemo.VALUE)'",
        "uv": f"/run/test-tools/uv pip install --no-cache --python-preference only-system "
        f"--target /tmp/t --index-url {url}/simple/ sbdemo && "
        "PYTHONPATH=/tmp/t python3 -c 'import sbdemo; print(sbdemo.VALUE)'",
        "npm": f"mkdir /tmp/p && cd /tmp/p && npm install --no-audit --no-fund --cache /tmp/c "
        f"--registry {url}/ sbdemo && node -e 'console.log(require(\"sbdemo\"))'",
    }


@pytest.mark.sandbox
@needs_ip
@pytest.mark.parametrize("tool", ["pip", "uv", "npm"])
def test_setup_trusts_a_private_ca_through_the_hosts_ssl_cert_file_alone(
    private_registry: PrivateRegistry, tmp_path: Path, tool: str, sandbox_users: Users
) -> None:
    """Each package tool reaches the registry once the host's SSL_CERT_FILE holds its CA, and
    fails on the certificate, recognised as the network's failure, without it."""
    command = _setup_commands(private_registry.url)[tool]
    tools = {"/run/test-tools/uv": _uv()} if tool == "uv" else {}
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox())
    host = HostNetwork.detect({"SSL_CERT_FILE": str(private_registry.trusting)})
    results = {}
    for name, network in (("trusted", host), ("untrusted", HostNetwork())):
        variables, binds = network.mounts(network.write_bundle(tmp_path))
        log = tmp_path / f"{name}.log"
        mounts = Mounts(network=True, environment=variables, ro_binds={**binds, **tools})
        started = time.monotonic()
        result = sandbox.run(command, (), mounts=mounts, log=log, timeout=300)
        assert time.monotonic() - started < 300
        results[name] = (result.exit_code, log.read_text(errors="replace"))
    code, text = results["trusted"]
    assert (code, text.rstrip().splitlines()[-1]) == (0, "42"), text
    code, text = results["untrusted"]
    failure = network_failure(text)
    assert code != 0
    assert failure is not None, text
    assert failure.kind == "tls", text


_CA_VARIABLES = (*CA_FILE_VARIABLES, *CA_DIRECTORY_VARIABLES)


@pytest.mark.sandbox
@needs_ip
def test_a_run_stops_on_an_untrusted_registry_and_resumes_once_the_ca_is_set(
    private_registry: PrivateRegistry,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the CA, the first candidate's setup fails on TLS: the run stops with exit 2 and
    the line naming SSL_CERT_FILE, the candidate not rejected; with it set, `--resume` finishes
    the run, and nothing of the bundle reaches the export."""
    for name in _CA_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    config = (
        f"setupCommand = 'python3 -m venv .venv && .venv/bin/pip install --quiet --index-url "
        f"{private_registry.url}/simple/ sbdemo && "
        """.venv/bin/python -m pip install --quiet -e ".[test]"'\n"""
    )
    history = generate(tmp_path, 1, config=config)
    out, run_dir = tmp_path / "bench.tar.gz", tmp_path / "bench.run"
    argv = ["run", "--repo", str(history), "--easy", "1", "--over-fetch", "1", "--source-url",
            "https://example.com/acme/genkit", "--out", str(out)]  # fmt: skip
    argv.append("--no-quality")  # the quality checks are not this test's: minutes saved
    assert main(argv) == 2
    captured = capsys.readouterr()
    error = captured.err.strip().splitlines()[-1]
    assert error.startswith("error: setup: setupCommand could not reach the network (tls):")
    assert "set SSL_CERT_FILE" in error
    assert error.endswith(f"the run stopped, resume with: selfbench run --resume {run_dir}")
    state = json.loads((run_dir / "candidates" / "pr-1.json").read_text())
    assert (state["status"], state["next"]) == ("active", "draft")

    monkeypatch.setenv("SSL_CERT_FILE", str(private_registry.trusting))
    assert main(["run", "--resume", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "setup trusts the host's CA bundle (SSL_CERT_FILE)" in shown
    assert "accepted pr-1 (easy)" in shown
    ca = private_registry.ca.read_bytes().split(b"\n")[1]
    written = [out, *run_dir.rglob("*")]
    assert not [path for path in written if path.is_file() and ca in path.read_bytes()]
    assert str(private_registry.trusting).encode() not in out.read_bytes()


@pytest.mark.sandbox
@needs_ip
def test_a_setup_needing_a_host_the_network_does_not_reach_rejects_its_candidate_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A setup that cannot resolve a host while the registries still answer (a dependency from a
    repository's archive, on a network that reaches only its registry) rejects the candidate,
    naming the host's failure, and the run goes on: a resume would stop on it again."""
    resolve = "import socket; socket.getaddrinfo('archive.unreachable.invalid', 443)"
    config = f"setupCommand = '''python3 -c \"{resolve}\"'''\n"
    history = generate(tmp_path, 1, config=config)
    argv = ["run", "--repo", str(history), "--easy", "1", "--over-fetch", "1", "--source-url",
            "https://example.com/acme/genkit", "--out", str(tmp_path / "bench.tar.gz")]  # fmt: skip
    assert main(argv) == 1  # the tier is blocked: no candidate left
    shown = capsys.readouterr().out
    rejected = next(line for line in shown.splitlines() if line.startswith("rejected pr-1"))
    assert rejected.startswith(
        "rejected pr-1 (easy): draft: setup: setupCommand could not reach the network (dns): "
        "socket.gaierror: [Errno -2] Name or service not known (log "
    )
    assert rejected.endswith(
        "; the registries answered a check made right after, so this candidate's setup needs a "
        "host this network does not reach"
    )
    state = json.loads((tmp_path / "bench.run" / "candidates" / "pr-1.json").read_text())
    assert state["status"] == "rejected"


@pytest.mark.sandbox
@needs_ip
def test_a_run_whose_registry_the_sandbox_cannot_trust_stops_before_mining(
    private_registry: PrivateRegistry,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The preflight asks the project's registry (here pip's index, set for setup by
    `--setup-env PIP_INDEX_URL`) from the sandbox before any work: untrusted, the run stops in
    seconds with exit 2 and the fix, and leaves no run directory; trusted, the check passes."""
    for name in _CA_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("PIP_INDEX_URL", f"{private_registry.url}/simple/")
    history = generate(tmp_path, 1)
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(history), "--easy", "1", "--source-url",
            "https://example.com/acme/genkit", "--setup-env", "PIP_INDEX_URL",
            "--out", str(out)]  # fmt: skip
    started = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - started < 60
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(
        "error: setup: the Python registry check (python3 -m pip index versions pip) could not "
        "reach the network (tls): "
    )
    assert "set SSL_CERT_FILE" in error
    assert not (tmp_path / "bench.run").exists()

    from selfbench.environments.local.network_probe import ecosystems, probe_registries  # noqa: PLC0415

    probes = ecosystems(history, "HEAD")
    assert [probe.name for probe in probes] == ["Python"]
    trusted = HostNetwork.detect({"SSL_CERT_FILE": str(private_registry.trusting)})
    setup_env = (("PIP_INDEX_URL", f"{private_registry.url}/simple/"),)
    probe_registries(probes, host_network=trusted, setup_env=setup_env)


@pytest.mark.parametrize(
    ("files", "probed"),
    [
        (["pyproject.toml", "src/a.py"], ["Python"]),
        (["setup.py"], ["Python"]),
        (["package.json", "pnpm-lock.yaml"], ["npm"]),
        (["go.mod", "main.go"], ["Go"]),
        (["Cargo.toml", "src/lib.rs"], ["Cargo"]),
        (["pyproject.toml", "package.json"], ["Python", "npm"]),
        (["README.md", "web/package.json"], []),  # only the root's manifests say
    ],
)
def test_the_root_manifests_say_which_registries_are_probed(
    tmp_path: Path, files: list[str], probed: list[str]
) -> None:
    from run_history import git  # noqa: PLC0415
    from selfbench.environments.local.network_probe import ecosystems  # noqa: PLC0415

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    for name in files:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("{}\n")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "files")
    assert [probe.name for probe in ecosystems(repo, "HEAD")] == probed


@pytest.mark.sandbox
@needs_ip
def test_a_client_the_sandbox_lacks_is_not_the_networks_failure(tmp_path: Path) -> None:
    from selfbench.environments.local.network_probe import Probe, probe_registries  # noqa: PLC0415

    missing = Probe("Nothing", ("x",), "no-such-registry-client ping")
    probe_registries((missing,), host_network=HostNetwork())
