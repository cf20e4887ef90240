"""Ready-made agent harnesses: a real coding agent from a package registry, pinned, installed
once per machine into a cache and run in the local agent phase against a model API that the
phase's allow-list reaches (`environments.egress`).

`--agent HARNESS:MODEL` (or `NAME=HARNESS:MODEL`) selects one. Its install is a directory of its
own (a Python virtual environment made with the interpreter the sandbox shows, its files copied,
so it runs wherever it is bound), kept under `harness_cache()/<name>-<version>/` and bound
read-only at `HARNESS_ROOT` into every agent phase that runs it: no trial can change what a later
one runs. The harness reads the task's instruction, works in `/app` as the `agent` user, and
reports its usage from its own trajectory as a `selfbench-usage:` line.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from selfbench.environments.egress import MODEL_APIS, EgressPlan, Endpoint, ModelApi, endpoint_of
from selfbench.environments.process import CalledProcessError, run_captured
from selfbench.errors import EvalError, translating
from selfbench.toolchains.provision import visible_in_sandbox

__all__ = [
    "AIDER_VERSION",
    "CA_VARIABLES",
    "CLAUDE_CODE_VERSION",
    "CODEX_VERSION",
    "GEMINI_CLI_VERSION",
    "HARNESSES",
    "HARNESS_CA",
    "HARNESS_ROOT",
    "HARNESS_RUN",
    "MINI_SWE_AGENT_VERSION",
    "OPENCODE_VERSION",
    "TRAJECTORY_DIR",
    "Harness",
    "harness_cache",
    "host_ca_bundle",
    "install_harness",
]

HARNESS_ROOT = "/opt/selfbench-harness"
"""Where the agent phase sees the harness's install (read-only)."""
TRAJECTORY_DIR = "/run/selfbench-agent"
"""Where a harness leaves its trajectory, `trajectory.json` (one document: ATIF or
mini-swe-agent's), `trajectory.jsonl` (JSON lines: Codex's events, Claude Code's, OpenCode's and
Gemini CLI's streams) or `trajectory.md` (aider's chat history), for the trial to keep
(`local_trials`)."""
HARNESS_RUN = "/run/selfbench-harness"
"""Where the agent phase sees the trial's harness files: `env` (its variables, sourced) and
`forward.py` (the allow-list's forwarder); never its keys, which reach it in its environment."""
HARNESS_CA = "/run/selfbench-ca.pem"
"""Where the agent phase sees the host's CA bundle (read-only; `host_ca_bundle`)."""
CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE")
"""The variables naming a CA bundle, in the order the host's are read; each harness gets all
of them naming `HARNESS_CA` (OpenSSL and Python's httpx read `SSL_CERT_FILE`, requests
`REQUESTS_CA_BUNDLE`, Node adds `NODE_EXTRA_CA_CERTS` to its own store, curl
`CURL_CA_BUNDLE`)."""
_SYSTEM_BUNDLES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu, Alpine
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL
    "/etc/ssl/cert.pem",  # Arch, the BSDs
)

MINI_SWE_AGENT_VERSION = "2.4.6"
"""The mini-swe-agent release the ready-made definition installs (`mini-swe-agent==2.4.6`)."""
CODEX_VERSION = "0.171.0"
"""The Codex CLI release the ready-made definition installs (`@openai/codex@0.171.0`)."""
CLAUDE_CODE_VERSION = "2.1.332"
"""The Claude Code release the ready-made definition installs
(`@anthropic-ai/claude-code@2.1.332`)."""
GEMINI_CLI_VERSION = "0.61.0"
"""The Gemini CLI release the ready-made definition installs (`@google/gemini-cli@0.61.0`)."""

AIDER_VERSION = "0.86.2"
"""The aider release the ready-made definition installs (`aider-chat==0.86.2`)."""
OPENCODE_VERSION = "1.18.33"
"""The OpenCode release the ready-made definition installs (`opencode-ai@1.18.33`)."""

_INSTALLED = ".selfbench-installed"
_CONSTRAINTS = Path(__file__).with_name("harness_constraints")
"""The pinned dependencies of the PyPI harnesses, one `<name>.txt` each."""
_PIP_SECONDS = 900.0

_PRINT_USAGE = """
fields = ([f"tokens={tokens}"] if tokens else []) + ([f"cost_usd={cost:.6f}"] if cost > 0 else [])
if fields:
    print("selfbench-usage:", *fields)
"""
"""The end of each Python usage reader: its `tokens` and `cost` as the agents' usage line
(`agents.USAGE_PREFIX`; that module imports this one)."""

_TRAJECTORY_USAGE = (
    """
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as handle:
        data = json.load(handle)
except (OSError, ValueError):
    sys.exit(0)
tokens = 0
for message in data.get("messages") or []:
    extra = message.get("extra") or {}
    usage = (extra.get("response") or {}).get("usage") or {}
    tokens += int(usage.get("total_tokens") or 0)
stats = (data.get("info") or {}).get("model_stats") or {}
cost = float(stats.get("instance_cost") or 0)
"""
    + _PRINT_USAGE
)
"""Reads mini-swe-agent's trajectory: the tokens of every model response, its cost."""

_MINI_SWE_AGENT = f"""
set -u
. {HARNESS_RUN}/env
trajectory="$HOME/trajectory.json"
{HARNESS_ROOT}/bin/python3 -m minisweagent.run.mini --yolo --exit-immediately --cost-limit 0 \\
  --model "$SELFBENCH_MODEL" --task "$SELFBENCH_INSTRUCTION" --output "$trajectory"
status=$?
{HARNESS_ROOT}/bin/python3 -c {shlex.quote(_TRAJECTORY_USAGE)} "$trajectory"
cp "$trajectory" {TRAJECTORY_DIR}/trajectory.json 2>/dev/null
exit "$status"
"""


_CODEX_USAGE = r"""
/"type":"turn.completed"/ {
  if (match($0, /"input_tokens":[0-9]+/)) tokens += substr($0, RSTART + 15, RLENGTH - 15)
  if (match($0, /"output_tokens":[0-9]+/)) tokens += substr($0, RSTART + 16, RLENGTH - 16)
}
END { if (tokens) print "selfbench-usage: tokens=" tokens }
"""
"""Reads Codex's `--json` events: the input and output tokens of every turn."""

_CODEX = f"""
set -u
. {HARNESS_RUN}/env
export CODEX_HOME="$HOME/.codex"
mkdir -p "$CODEX_HOME"
base="${{OPENAI_BASE_URL:-https://api.openai.com/v1}}"
provider="model_providers.selfbench={{name='selfbench', base_url='$base', \\
env_key='OPENAI_API_KEY', wire_api='responses'}}"
{HARNESS_ROOT}/bin/codex exec --json --skip-git-repo-check \\
  --dangerously-bypass-approvals-and-sandbox --model "${{SELFBENCH_MODEL#openai/}}" \\
  -c model_provider=selfbench -c "$provider" "$SELFBENCH_INSTRUCTION" </dev/null \\
  | tee "$HOME/codex.jsonl"
status=${{PIPESTATUS[0]}}
awk {shlex.quote(_CODEX_USAGE)} "$HOME/codex.jsonl"
cp "$HOME/codex.jsonl" {TRAJECTORY_DIR}/trajectory.jsonl 2>/dev/null
exit "$status"
"""


_CLAUDE_USAGE = (
    """
import json, sys
data = {}
try:
    with open(sys.argv[1], encoding="utf-8") as handle:
        for line in handle:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "result":
                data = event
except OSError:
    sys.exit(0)
tokens = 0
for usage in (data.get("modelUsage") or {}).values():
    for key in ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"):
        tokens += int(usage.get(key) or 0)
cost = float(data.get("total_cost_usd") or 0)
"""
    + _PRINT_USAGE
)
"""Reads Claude Code's `--output-format stream-json` lines: its last `result` event's tokens of
every model, its cost."""

_CLAUDE_CODE = f"""
set -u
. {HARNESS_RUN}/env
{HARNESS_ROOT}/bin/claude-code -p "$SELFBENCH_INSTRUCTION" --output-format stream-json \\
  --verbose --dangerously-skip-permissions --model "${{SELFBENCH_MODEL#anthropic/}}" </dev/null \\
  | tee "$HOME/claude.jsonl"
status=${{PIPESTATUS[0]}}
echo
{HARNESS_ROOT}/bin/python3 -c {shlex.quote(_CLAUDE_USAGE)} "$HOME/claude.jsonl"
cp "$HOME/claude.jsonl" {TRAJECTORY_DIR}/trajectory.jsonl 2>/dev/null
exit "$status"
"""


_EVENTS = """
import json, sys
tokens, cost = 0, 0.0
try:
    with open(sys.argv[1], encoding="utf-8") as handle:
        lines = handle.read().splitlines()
except OSError:
    sys.exit(0)
events = []
for line in lines:
    try:
        event = json.loads(line)
    except ValueError:
        continue
    if isinstance(event, dict):
        events.append(event)
"""
"""The start of a usage reader of JSON lines: the `events` (objects) of the file its first
argument names."""

_AIDER_USAGE = (
    _EVENTS
    + """
for event in events:
    if event.get("event") == "message_send":
        properties = event.get("properties") or {}
        tokens += int(properties.get("total_tokens") or 0)
        cost += float(properties.get("cost") or 0)
"""
    + _PRINT_USAGE
)
"""Reads aider's analytics log (kept locally, sent nowhere): the tokens and cost of every
`message_send` event, one per model reply."""

# aider fetches litellm's price table on a cold cache (a host the phase does not reach): its home
# gets the table litellm ships. Edits stay uncommitted in the agent's tree, which collect diffs.

_AIDER = f"""
set -u
. {HARNESS_RUN}/env
caches="$HOME/.aider/caches"
prices=model_prices_and_context_window
mkdir -p "$caches"
for table in {HARNESS_ROOT}/lib/python3*/site-packages/litellm/"$prices"_backup.json; do
  cp "$table" "$caches/$prices.json"
done
git=(--no-auto-commits --no-dirty-commits --no-gitignore)
[ -d .git ] || git=(--no-git)
tags=.aider.tags.cache.v4
[ -e "$tags" ] && made_tags=0 || made_tags=1
{HARNESS_ROOT}/bin/python3 -m aider --yes-always "${{git[@]}}" --no-check-update \
  --no-show-release-notes --no-show-model-warnings --no-pretty --no-stream --no-fancy-input \
  --no-detect-urls --no-suggest-shell-commands --no-auto-lint --no-auto-test --analytics-disable \
  --analytics-log "$HOME/aider-events.jsonl" --chat-history-file "$HOME/aider-chat.md" \
  --input-history-file "$HOME/aider-input" --model "$SELFBENCH_MODEL" \
  --message "$SELFBENCH_INSTRUCTION" </dev/null
status=$?
[ "$made_tags" = 0 ] || rm -rf -- "$tags"
{HARNESS_ROOT}/bin/python3 -c {shlex.quote(_AIDER_USAGE)} "$HOME/aider-events.jsonl"
cp "$HOME/aider-chat.md" {TRAJECTORY_DIR}/trajectory.md 2>/dev/null
exit "$status"
"""


_OPENCODE_CONFIG = """
import json, os
model = os.environ["SELFBENCH_MODEL"].removeprefix("openai/")
provider = {
    "npm": "@ai-sdk/openai-compatible",
    "name": "selfbench",
    "options": {
        "baseURL": os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
        "apiKey": "{env:OPENAI_API_KEY}",
    },
    "models": {model: {}},
}
print(json.dumps({
    "provider": {"selfbench": provider},
    "model": f"selfbench/{model}",
    "small_model": f"selfbench/{model}",
    "autoupdate": False,
    "share": "disabled",
}))
"""
"""OpenCode's configuration: one OpenAI-compatible provider (Chat Completions, the provider
package OpenCode bundles) on the base URL, with the model as its only one."""

_OPENCODE_USAGE = (
    _EVENTS
    + """
for event in events:
    if event.get("type") == "step_finish":
        part = event.get("part") or {}
        tokens += int((part.get("tokens") or {}).get("total") or 0)
        cost += float(part.get("cost") or 0)
"""
    + _PRINT_USAGE
)
"""Reads OpenCode's `--format json` events: the tokens and cost of every `step_finish`, one
per model reply."""

_OPENCODE = f"""
set -u
. {HARNESS_RUN}/env
OPENCODE_CONFIG_CONTENT="$({HARNESS_ROOT}/bin/python3 -c {shlex.quote(_OPENCODE_CONFIG)})"
export OPENCODE_CONFIG_CONTENT
{HARNESS_ROOT}/bin/opencode run --pure --auto --format json --title selfbench \
  --model "selfbench/${{SELFBENCH_MODEL#openai/}}" "$SELFBENCH_INSTRUCTION" </dev/null \
  | tee "$HOME/opencode.jsonl"
status=${{PIPESTATUS[0]}}
{HARNESS_ROOT}/bin/python3 -c {shlex.quote(_OPENCODE_USAGE)} "$HOME/opencode.jsonl"
cp "$HOME/opencode.jsonl" {TRAJECTORY_DIR}/trajectory.jsonl 2>/dev/null
exit "$status"
"""


_GEMINI_SETTINGS = """{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "ide": {"enabled": false},
  "tools": {"shell": {"enableInteractiveShell": false}}
}"""
"""Gemini CLI's user settings: the API key's auth (no login), no trust prompt, no update check,
no usage statistics or telemetry, no IDE, shell commands as plain child processes (no pseudo
terminal)."""

_GEMINI_USAGE = (
    _EVENTS
    + """
for event in events:
    if event.get("type") == "result":
        tokens = int((event.get("stats") or {}).get("total_tokens") or 0)
"""
    + _PRINT_USAGE
)
"""Reads Gemini CLI's `--output-format stream-json` events: its last `result` event's total
tokens of every model (it reports no cost)."""

_OPENAI_API = MODEL_APIS["openai"]
_ANTHROPIC_API = MODEL_APIS["anthropic"]
_GEMINI_API = MODEL_APIS["gemini"]

_GEMINI_CLI = f"""
set -u
. {HARNESS_RUN}/env
mkdir -p "$HOME/.gemini"
cat > "$HOME/.gemini/settings.json" <<'SETTINGS'
{_GEMINI_SETTINGS}
SETTINGS
{HARNESS_ROOT}/bin/gemini-cli -p "$SELFBENCH_INSTRUCTION" --output-format stream-json --yolo \\
  --model "${{SELFBENCH_MODEL#*/}}" </dev/null | tee "$HOME/gemini.jsonl"
status=${{PIPESTATUS[0]}}
{HARNESS_ROOT}/bin/python3 -c {shlex.quote(_GEMINI_USAGE)} "$HOME/gemini.jsonl"
cp "$HOME/gemini.jsonl" {TRAJECTORY_DIR}/trajectory.jsonl 2>/dev/null
exit "$status"
"""


@dataclass(frozen=True, slots=True)
class Harness:
    """One ready-made agent harness."""

    name: str
    registry: Literal["pypi", "npm"]
    package: str
    version: str
    script: str
    """The bash script the `agent` user runs in `/app` (`$SELFBENCH_MODEL` names the model)."""
    providers: Mapping[str, ModelApi]
    """The model's provider (`openai/…`) → its API (`egress.MODEL_APIS`)."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Fixed variables the harness runs with (no prompts, no update checks)."""
    executable: str = ""
    """An npm harness's program, a glob under the install, linked as `bin/<name>`."""
    node: int = 0
    """The Node major release an npm harness's program (a Node script) needs at least, from
    the sandbox's `/usr`; 0 for a program of its own."""
    constraints: bool = False
    """A PyPI harness's dependencies are pinned (`harness_constraints/<name>.txt`)."""

    @property
    def requirement(self) -> str:
        """The pinned requirement the install asks the registry for."""
        if self.registry == "npm":
            return f"{self.package}@{self.version}"
        return f"{self.package}=={self.version}"

    def base_url(self, model: str, environ: Mapping[str, str]) -> tuple[str, str]:
        """The variable naming `model`'s API base URL, and that URL (as `environ` sets it, else
        the provider's own).

        Raises:
            EvalError: a provider the harness does not know.
        """
        provider = model.split("/", 1)[0] if "/" in model else ""
        if provider not in self.providers:
            known = ", ".join(f"{name}/…" for name in self.providers)
            raise EvalError(f"{self.name}: no known API for model {model!r} (known: {known})")
        api = self.providers[provider]
        return api.variable, api.base_url(environ)

    def endpoints(self, model: str, environ: Mapping[str, str]) -> tuple[Endpoint, ...]:
        """The host and port the harness must reach for `model`: its API's base URL's.

        Raises:
            EvalError: a provider the harness does not know.
            EgressError: a base URL that is not an http(s) URL.
        """
        return (endpoint_of(self.base_url(model, environ)[1]),)

    @property
    def key_variables(self) -> tuple[str, ...]:
        """The host's variables passed on when set: its providers' API keys."""
        keys = (name for api in self.providers.values() for name in api.keys)
        return tuple(dict.fromkeys(keys))

    def keys(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The key variables set in `environ` (passed to the phase in its environment)."""
        return {name: environ[name] for name in self.key_variables if environ.get(name)}

    def variables(
        self, model: str, environ: Mapping[str, str], plan: EgressPlan, *, ca: bool = False
    ) -> dict[str, str]:
        """What the harness runs with: its fixed variables, the model, the keys set in
        `environ`, the base URL as the phase reaches it (`EgressPlan.inside_url`) and, with
        `ca`, each of `CA_VARIABLES` naming `HARNESS_CA`."""
        variable, url = self.base_url(model, environ)
        bundle = dict.fromkeys(CA_VARIABLES, HARNESS_CA) if ca else {}
        return {
            **self.environment,
            **bundle,
            "SELFBENCH_MODEL": model,
            **self.keys(environ),
            variable: plan.inside_url(url),
        }


HARNESSES: Mapping[str, Harness] = {
    "mini-swe-agent": Harness(
        name="mini-swe-agent",
        registry="pypi",
        package="mini-swe-agent",
        version=MINI_SWE_AGENT_VERSION,
        script=_MINI_SWE_AGENT,
        providers={
            "openai": _OPENAI_API,
            "anthropic": _ANTHROPIC_API,
        },
        environment={
            "MSWEA_CONFIGURED": "true",
            "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        },
        constraints=True,
    ),
    "aider": Harness(
        name="aider",
        registry="pypi",
        package="aider-chat",
        version=AIDER_VERSION,
        script=_AIDER,
        providers={
            "openai": _OPENAI_API,
            "anthropic": _ANTHROPIC_API,
        },
        environment={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        constraints=True,
    ),
    "codex": Harness(
        name="codex",
        registry="npm",
        package="@openai/codex",
        version=CODEX_VERSION,
        script=_CODEX,
        providers={"openai": _OPENAI_API},
        executable="node_modules/@openai/codex-linux-*/vendor/*/bin/codex",
    ),
    "claude-code": Harness(
        name="claude-code",
        registry="npm",
        package="@anthropic-ai/claude-code",
        version=CLAUDE_CODE_VERSION,
        script=_CLAUDE_CODE,
        providers={"anthropic": _ANTHROPIC_API},
        environment={
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        executable="node_modules/@anthropic-ai/claude-code-linux-*/claude",
    ),
    "opencode": Harness(
        name="opencode",
        registry="npm",
        package="opencode-ai",
        version=OPENCODE_VERSION,
        script=_OPENCODE,
        providers={"openai": _OPENAI_API},
        environment={
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        },
        executable="node_modules/opencode-linux-*/bin/opencode",
    ),
    "gemini-cli": Harness(
        name="gemini-cli",
        registry="npm",
        package="@google/gemini-cli",
        version=GEMINI_CLI_VERSION,
        script=_GEMINI_CLI,
        providers={"gemini": _GEMINI_API, "google": _GEMINI_API},
        environment={"GEMINI_CLI_NO_RELAUNCH": "true"},
        executable="node_modules/@google/gemini-cli/bundle/gemini.js",
        node=20,
    ),
}
"""The ready-made harnesses, by the name `--agent` gives."""


def harness_cache(environ: Mapping[str, str] | None = None) -> Path:
    """Where installed harnesses are kept: `$SELFBENCH_HARNESS_DIR`, else
    `$XDG_CACHE_HOME/selfbench/harnesses`, else `~/.cache/selfbench/harnesses`."""
    env = os.environ if environ is None else environ
    if env.get("SELFBENCH_HARNESS_DIR"):
        return Path(env["SELFBENCH_HARNESS_DIR"])
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "selfbench" / "harnesses"


def host_ca_bundle(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The files whose certificates make the host's CA bundle: the first of `CA_VARIABLES` in
    `environ` naming a readable file (a company's inspecting proxy's CA among them), after the
    system's bundle when that variable is `NODE_EXTRA_CA_CERTS` (certificates added to the
    usual ones, by its definition); else the system's bundle; none when there is none."""
    system = next((path for path in map(Path, _SYSTEM_BUNDLES) if _readable(path)), None)
    for variable in CA_VARIABLES:
        path = Path(environ.get(variable) or "")
        if environ.get(variable) and _readable(path):
            if variable == "NODE_EXTRA_CA_CERTS" and system is not None:
                return (system, path)
            return (path,)
    return (system,) if system is not None else ()


def _readable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.R_OK)


def _sandbox_python() -> str:
    """A Python the sandbox shows (the host's under `/usr`), to build the install from."""
    for candidate in ("/usr/bin/python3", "/bin/python3"):
        path = Path(candidate)
        if path.is_file() and visible_in_sandbox(path.resolve()):
            return str(path)
    raise EvalError("cannot install a PyPI harness: no python3 under /usr for the sandbox")


def install_harness(harness: Harness, cache: Path | None = None) -> Path:
    """The harness's install under `cache` (default `harness_cache()`): made once from the
    registry, reused afterwards; concurrent callers wait for one install. Root-owned,
    world-readable. It is a virtual environment with its files copied (its Python runs the
    allow-list's forwarder): PyPI's `pip install PACKAGE==VERSION` into it, npm's `npm install
    PACKAGE@VERSION` beside it with the program linked as `bin/NAME`.

    Raises:
        EvalError: the registry or the install failed (pip's last lines said).
    """
    root = harness_cache() if cache is None else cache
    target = root / f"{harness.name}-{harness.version}"
    if (target / _INSTALLED).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / _INSTALLED).is_file():
            return target
        _install(harness, root, target)
    return target


def _constraints(harness: Harness) -> list[str]:
    """pip's `--constraint FILE` for a harness whose dependencies are pinned."""
    if not harness.constraints:
        return []
    return ["--constraint", str(_CONSTRAINTS / f"{harness.name}.txt")]


def _check_sandbox_node(harness: Harness) -> None:
    """Returns when the sandbox shows a Node (under `/usr`) of at least `harness.node`.

    Raises:
        EvalError: it shows none, or an older one.
    """
    found = "none"
    for candidate in ("/usr/bin/node", "/bin/node"):
        path = Path(candidate)
        if path.is_file() and visible_in_sandbox(path.resolve()):
            found = run_captured([candidate, "--version"], check=True).stdout.decode().strip()
            major = found.removeprefix("v").split(".", 1)[0]
            if major.isdigit() and int(major) >= harness.node:
                return
            break
    raise EvalError(
        f"cannot install {harness.requirement}: its program needs Node {harness.node} or later "
        f"under /usr, which the sandbox shows (found: {found})"
    )


def _npm_install(harness: Harness, building: Path) -> None:
    """`npm install` the harness into `building`, its program linked as `bin/NAME`.

    Raises:
        EvalError: no npm here, no Node the sandbox shows for a Node program, or the package
            holds no program for this machine.
        CalledProcessError: npm failed.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise EvalError(f"cannot install {harness.requirement}: npm is not on PATH")
    if harness.node:
        _check_sandbox_node(harness)
    flags = ["--no-audit", "--no-fund", "--no-update-notifier"]
    run_captured([npm, "install", "--prefix", str(building), *flags, harness.requirement],
                 check=True)  # fmt: skip
    found = sorted(building.glob(harness.executable))
    if not found:
        raise EvalError(f"cannot install {harness.requirement}: no {harness.executable} in it")
    link = os.path.relpath(found[0], building / "bin")
    (building / "bin" / harness.name).symlink_to(link)


def _install(harness: Harness, root: Path, target: Path) -> None:
    building = Path(tempfile.mkdtemp(prefix=f".{harness.name}-", dir=root))
    started = time.monotonic()
    doing = f"install {harness.requirement} for {harness.name}"
    installed = False
    try:
        with translating(EvalError, doing):
            run_captured([_sandbox_python(), "-m", "venv", "--copies", str(building)], check=True)
            if harness.registry == "pypi":
                pip = [str(building / "bin" / "python3"), "-m", "pip", "install", "--no-input"]
                pip += ["--disable-pip-version-check", *_constraints(harness)]
                run_captured([*pip, harness.requirement], check=True)
            else:
                _npm_install(harness, building)
        installed = True
    except CalledProcessError as exc:
        tail = " ".join(bytes(exc.stderr or b"").decode(errors="replace").splitlines()[-3:])
        raise EvalError(f"cannot {doing}: {tail.strip()}") from exc
    finally:
        if not installed:
            shutil.rmtree(building, ignore_errors=True)
    seconds = time.monotonic() - started
    (building / _INSTALLED).write_text(f"{harness.requirement} in {seconds:.0f} s\n")
    building.chmod(0o755)
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(target)
    building.rename(target)
