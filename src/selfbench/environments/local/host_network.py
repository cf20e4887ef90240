"""The host's network configuration, carried into setup, and setup's network failures (the
machine's fault, never a candidate's).

A company network that inspects HTTPS signs every registry's certificate with its own CA, and its
users' tools already trust it through variables (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`, …). The
sandbox starts each phase with an environment of its own, so setup would meet the proxy with the
tools' built-in roots only (uv's and node's do not read the system store: `invalid peer
certificate: UnknownIssuer`, `SELF_SIGNED_CERT_IN_CHAIN`). `HostNetwork.detect` reads the
variables once per command; the certificates they name (files, or `SSL_CERT_DIR`'s directories)
become one bundle, bound read-only into setup's phases alone, and every package tool setup runs
is pointed at it (`TRUST_VARIABLES`): one CA given once serves pip, uv, npm, pnpm and yarn through
corepack, bun, go, cargo and git. The proxy variables are passed as they are, in both spellings.
None of it reaches the agent's or the verifier's phases, a bundle or an export.

`network_failure` reads a failed setup's log for the lines package tools print when TLS, DNS, a
connection or a registry's time-out failed, so a run can stop on the first (with the fix) instead
of rejecting every candidate in turn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from selfbench.errors import SetupNetworkError
from selfbench.progress import Reporter, silent

__all__ = [
    "CA_DIRECTORY_VARIABLES",
    "CA_FILE_VARIABLES",
    "CONTAINER_CA_BUNDLE",
    "PROXY_VARIABLES",
    "TRUST_VARIABLES",
    "HostNetwork",
    "NetworkFailure",
    "describe_failure",
    "failure_error",
    "network_failure",
    "parse_certificates",
]

CA_FILE_VARIABLES = (
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "NODE_EXTRA_CA_CERTS",
    "NPM_CONFIG_CAFILE",
)
"""Variables naming a CA bundle file that users' tools already honour (either case)."""

CA_DIRECTORY_VARIABLES = ("SSL_CERT_DIR",)
"""Variables naming directories of CA certificates (`:`-separated, as OpenSSL reads it)."""

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")
"""Proxy variables passed to setup as they are (either case read; both spellings set)."""

CONTAINER_CA_BUNDLE = "/run/selfbench-host/ca-bundle.pem"
"""Where setup's phases find the host's certificates (read-only)."""

TRUST_VARIABLES = (
    "SSL_CERT_FILE",  # OpenSSL and rustls readers: Python's ssl, uv, go, cargo, curl
    "REQUESTS_CA_BUNDLE",  # requests, pip's included
    "PIP_CERT",  # pip
    "CURL_CA_BUNDLE",  # curl
    "NODE_EXTRA_CA_CERTS",  # node and what runs on it (corepack, yarn berry); bun
    "npm_config_cafile",  # npm, pnpm and yarn 1, whose own agents ignore NODE_EXTRA_CA_CERTS
    "CARGO_HTTP_CAINFO",  # cargo's registry client
    "GIT_SSL_CAINFO",  # git over HTTPS (a dependency from a repository)
)
"""What setup's tools are told to trust: each set to `CONTAINER_CA_BUNDLE`."""

_CERTIFICATE_RE = re.compile(
    rb"-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END CERTIFICATE-----"
)
_FILE_LIMIT = 16 << 20
"""The most read of one named file: a CA bundle is a few hundred KB."""


def parse_certificates(data: bytes) -> tuple[bytes, ...]:
    """The PEM certificates in `data`, each normalised to `\\n` line ends, in order, once each.

    A bundle's comments, other PEM blocks (keys, trusted-certificate forms) and text around
    them are left out.
    """
    found: dict[bytes, None] = {}
    for match in _CERTIFICATE_RE.finditer(data):
        found.setdefault(match.group(0).replace(b"\r\n", b"\n"), None)
    return tuple(found)


def _read_certificates(path: Path) -> tuple[bytes, ...]:
    try:
        if not path.is_file():
            return ()
        with path.open("rb") as handle:
            return parse_certificates(handle.read(_FILE_LIMIT))
    except OSError:
        return ()


def _directory_files(directory: Path) -> list[Path]:
    try:
        return sorted(entry for entry in directory.iterdir() if entry.is_file())
    except OSError:
        return []


def _lookup(environ: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """The variable `name` as set, upper case first: (the spelling found, its value)."""
    for spelling in (name, name.lower()):
        value = environ.get(spelling, "")
        if value:
            return spelling, value
    return None


@dataclass(frozen=True, slots=True)
class HostNetwork:
    """The host's CA certificates and proxy settings, as setup is to use them."""

    certificates: tuple[bytes, ...] = ()
    """The PEM certificates named by the CA variables, each once."""
    ca_sources: tuple[str, ...] = ()
    """The variables (as spelled on the host) whose files or directories gave a certificate."""
    proxies: tuple[tuple[str, str], ...] = ()
    """(name, value) for each proxy variable set on the host, in both spellings."""
    reporter: Reporter = field(default=silent, compare=False, repr=False)
    """Told `summary()` whenever a setup carries it (`Reporter.setup_note`: a command says so
    once, and only when setup runs)."""

    @classmethod
    def detect(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        reporter: Reporter = silent,
    ) -> HostNetwork:
        """Read the host's variables (`os.environ` by default) and the files they name; what
        setup carries is told to `reporter` when a setup first uses it."""
        environ = os.environ if environ is None else environ
        certificates: dict[bytes, None] = {}
        sources: list[str] = []
        for name in (*CA_FILE_VARIABLES, *CA_DIRECTORY_VARIABLES):
            found = _lookup(environ, name)
            if found is None:
                continue
            spelling, value = found
            if name in CA_DIRECTORY_VARIABLES:
                paths = [f for d in value.split(":") if d for f in _directory_files(Path(d))]
            else:
                paths = [Path(value)]
            read = [cert for path in paths for cert in _read_certificates(path)]
            if read:
                sources.append(spelling)
                certificates.update(dict.fromkeys(read))
        proxies: list[tuple[str, str]] = []
        for name in PROXY_VARIABLES:
            found = _lookup(environ, name)
            if found is not None:
                proxies += [(name, found[1]), (name.lower(), found[1])]
        return cls(tuple(certificates), tuple(sources), tuple(proxies), reporter)

    @property
    def empty(self) -> bool:
        return not self.certificates and not self.proxies

    def bundle(self) -> bytes:
        """The certificates as one PEM bundle."""
        return b"".join(cert + b"\n" for cert in self.certificates)

    def environment(self) -> dict[str, str]:
        """The variables setup's phases get."""
        variables = dict(self.proxies)
        if self.certificates:
            variables.update(dict.fromkeys(TRUST_VARIABLES, CONTAINER_CA_BUNDLE))
        return variables

    def used(self) -> None:
        """A setup carries this configuration: tell the reporter (when it carries anything)."""
        if not self.empty:
            self.reporter.setup_note(self.summary())

    def mounts(self, bundle: Path) -> tuple[dict[str, str], dict[str, Path]]:
        """Setup's variables, and its read-only binds given the bundle's file on the host (made
        by `write_bundle`)."""
        binds = {CONTAINER_CA_BUNDLE: bundle} if self.certificates else {}
        return self.environment(), binds

    def write_bundle(self, directory: Path) -> Path:
        """The bundle as a world-readable file in `directory` (once; its path)."""
        path = directory / "host-ca-bundle.pem"
        if not path.is_file():
            path.write_bytes(self.bundle())
            path.chmod(0o644)
        return path

    def summary(self) -> tuple[str, ...]:
        """What is carried, a line each (printed once per command)."""
        lines = []
        if self.certificates:
            lines.append(f"setup trusts the host's CA bundle ({', '.join(self.ca_sources)})")
        proxies = [name for name, _ in self.proxies if name.isupper()]
        if proxies:
            lines.append(f"setup uses the host's proxy ({', '.join(proxies)})")
        return tuple(lines)


# --- failures --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NetworkFailure:
    """A setup log's first line that says the network failed, and what kind of failure."""

    kind: str
    """`tls`, `dns`, `refused` or `timeout`."""
    line: str

    def fix(self) -> str:
        """What the user can do about it."""
        if self.kind == "tls":
            return (
                "the registry's certificate is not trusted in the sandbox: set SSL_CERT_FILE "
                "(or SSL_CERT_DIR, NODE_EXTRA_CA_CERTS) to a CA bundle holding your network's CA; "
                "setup trusts those unless --no-host-network-config"
            )
        return (
            "setup could not reach the registry: if your network needs a proxy, set HTTPS_PROXY "
            "(and NO_PROXY) here, or pass what it needs with --setup-env NAME"
        )


_FAILURES = (
    ("tls", re.compile(
        r"CERTIFICATE_VERIFY_FAILED|certificate verify failed|invalid peer certificate"
        r"|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE"
        r"|DEPTH_ZERO_SELF_SIGNED_CERT|self[- ]signed certificate in certificate chain"
        r"|unable to get local issuer certificate|certificate signed by unknown authority"
        r"|SSL certificate problem|UnknownIssuer",
        re.IGNORECASE,
    )),
    ("dns", re.compile(
        r"Temporary failure in name resolution|Name or service not known|\bENOTFOUND\b"
        r"|\bEAI_AGAIN\b|dns error|failed to lookup address information|Could not resolve host"
        r"|: no such host\b",
    )),
    ("refused", re.compile(r"\bECONNREFUSED\b|Connection refused")),
    ("timeout", re.compile(
        r"\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b|Read timed out|Connection timed out|i/o timeout"
        r"|operation timed out|Network is unreachable|\bENETUNREACH\b",
    )),
)  # fmt: skip
"""What package tools print when the network failed them (pip, uv, npm, pnpm, yarn, corepack,
bun, go, cargo, curl, git), by kind."""

_RETRY_RE = re.compile(r"\bRetrying\b|\bretrying\b|will retry|\bWARN\b")
"""A line about a try that a later one may make good: its time-out or refusal alone proves
nothing when setup failed for another reason (a certificate failure is never made good)."""

_LINE_CHARS = 300


def network_failure(log: str) -> NetworkFailure | None:
    """The first line of a failed setup's log that says the network failed it, if any."""
    for line in log.splitlines():
        for kind, pattern in _FAILURES:
            if pattern.search(line) is None:
                continue
            if kind != "tls" and _RETRY_RE.search(line):
                continue
            text = " ".join(line.split())
            return NetworkFailure(kind, text[:_LINE_CHARS])
    return None


def describe_failure(failure: NetworkFailure, label: str, log: Path | None) -> str:
    """The one line a stopped command prints."""
    return f"{_failed(failure, label, log)}; {failure.fix()}"


def _failed(failure: NetworkFailure, label: str, log: Path | None) -> str:
    where = f" (log {log})" if log is not None else ""
    return f"setup: {label} could not reach the network ({failure.kind}): {failure.line}{where}"


def failure_error(failure: NetworkFailure, label: str, log: Path | None) -> SetupNetworkError:
    """The error a setup's network failure raises (`describe_failure` its message)."""
    return SetupNetworkError(
        describe_failure(failure, label, log),
        kind=failure.kind,
        failed=_failed(failure, label, log),
    )
