"""What the command modules of the `selfbench` command line share: reading, printing, and the
option groups (output format, parallelism, setup environment, resume, repository) that every
command declares through, each flag once, each read back and checked once."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from selfbench._fs import read_given
from selfbench._text import printable
from selfbench.errors import EXIT_REJECTED, InputError

__all__ = [
    "CEILING_FLAGS",
    "RERUNS_CEILING",
    "SetupSpec",
    "add_ceiling_options",
    "add_deps_option",
    "add_environment_option",
    "add_environment_options",
    "add_harbor_options",
    "add_jobs_option",
    "add_json_option",
    "add_model_option",
    "add_quality_options",
    "add_repo_option",
    "add_resume_option",
    "add_setup_options",
    "add_source_url_option",
    "agent_dependencies",
    "announce_host_network",
    "ceilings",
    "environment_kind",
    "environment_spec",
    "given_ceilings",
    "jobs",
    "print_json",
    "progress",
    "read_input",
    "refuse_unused",
    "rejected",
    "resume_dir",
    "setup_options",
    "working",
]

# The environment and progress modules are imported where an option or a spinner needs them:
# `check`, `audit` and `--version` use neither, and their records and locks cost start-up.
if TYPE_CHECKING:
    from selfbench.environments.local.ceilings import Ceilings
    from selfbench.environments.local.host_network import HostNetwork
    from selfbench.environments.spec import EnvironmentSpec, Kind

_T = TypeVar("_T")


def read_input(path: str) -> bytes:
    """The bytes of a file named on the command line; an unreadable one is rejected input."""
    return read_given(Path(path), error=InputError)


@contextmanager
def working(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs, for a person at a terminal only."""
    from selfbench.progress import choose_reporter, stage

    with stage(choose_reporter(), message):
        yield


@contextmanager
def progress(
    total: int,
    doing: str,
    verdicts: tuple[str, str],
    judge: Callable[[_T], tuple[str, bool, str | None]],
) -> Iterator[Callable[[_T], None]]:
    """Live progress on stderr: a bar at a terminal, one line per finished item otherwise.

    Yields the callback for each finished item; `judge` gives the item's name, whether it
    passed and the reason when not; `verdicts` names a pass and a failure (`accepted`,
    `rejected`); `doing` is the bar's label (`validating`).
    """
    from selfbench.progress import choose_reporter, stage

    reporter = choose_reporter(verdicts=verdicts)

    def finished(item: _T) -> None:
        name, accepted, reason = judge(item)
        reporter.candidate_finished(name, accepted=accepted, reason=reason)

    with stage(reporter, doing, total=total):
        yield finished


def rejected(reason: str) -> int:
    """Report a failed check the way an error is reported, with the exit code of a rejection."""
    sys.stderr.write(f"error: {printable(reason)}\n")
    return EXIT_REJECTED


def print_json(value: Any) -> None:
    """`value` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# --- output format: `--json` ----------------------------------------------------------------------

JSON_HELP = "print the result as JSON"


def add_json_option(parser: Any) -> None:
    """`--json`: the command prints its result as JSON on stdout (read back as `args.json`)."""
    parser.add_argument("--json", action="store_true", help=JSON_HELP)


# --- parallelism: `-j/--jobs` --------------------------------------------------------------------


def add_jobs_option(parser: Any, *, what: str, default: int | None = 1) -> None:
    """`-j N`/`--jobs N`: how many `what` (candidates, tasks) run at once. A `default` of None
    tells "not given" apart (`run --resume` may change it)."""
    shown = 1 if default is None else default
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=default,
        metavar="N",
        help=f"{what} at once (default: {shown})",
    )


def jobs(args: Any) -> int | None:
    """`-j`'s value, None when not given and without a default.

    Raises:
        InputError: a value below 1.
    """
    value: int | None = args.jobs
    if value is not None and value < 1:
        raise InputError("-j must be at least 1")
    return value


# --- resuming: `--resume DIR` --------------------------------------------------------------------


def add_resume_option(parser: Any, *, what: str, bare: str | None = None) -> None:
    """`--resume DIR`: continue the `what` whose state is in DIR. With `bare` (what a bare
    `--resume` continues, say `the --results directory`), DIR may be left out."""
    optional = {"nargs": "?", "const": True} if bare is not None else {}
    shown = f"continue the {what} in DIR" + (f" (bare: {bare})" if bare is not None else "")
    parser.add_argument("--resume", metavar="DIR", help=shown, **optional)


def resume_dir(args: Any, default: Path | None = None) -> Path | None:
    """The directory `--resume` names (`default` for a bare `--resume`), None without it."""
    given: str | bool | None = args.resume
    if given is None or given is False:
        return None
    return default if given is True else Path(given)


# --- the repository: `--repo`, `--source-url` ----------------------------------------------------


MIN_QUALITY_CHOICES = ("review", "ship")
"""`--min-quality`'s values (`selfbench.run.stages.MIN_QUALITY`, checked equal by a test)."""


def add_quality_options(parser: Any, *, gate: bool) -> None:
    """`--no-quality` (no quality checks, no `quality.json`) and, with `gate`,
    `--min-quality review|ship` (default None, read as `review`, so `--resume` can tell it was
    given)."""
    parser.add_argument(
        "--no-quality",
        action="store_true",
        help="skip the quality checks (ablation, mutation, pass-to-pass, instruction, "
        "dependencies) and write no quality.json",
    )
    if gate:
        parser.add_argument(
            "--min-quality",
            choices=MIN_QUALITY_CHOICES,
            help="the lowest quality verdict exported (default review: only reject is "
            "rejected; ship rejects review too)",
        )


def add_repo_option(parser: Any, *, required: bool, help: str) -> None:  # noqa: A002
    """`--repo REPO`: the git repository a command reads."""
    parser.add_argument("--repo", required=required, metavar="REPO", help=help)


def add_source_url_option(parser: Any, *, what: str) -> None:
    """`--source-url BASE`: pull request URLs for history without a GitHub remote."""
    parser.add_argument(
        "--source-url",
        metavar="BASE",
        help=f"for history without a GitHub remote: {what} record BASE/pull/<number>",
    )


# --- the drafted task's choices ----------------------------------------------------------------

DEPS_CHOICES = ("verifier", "agent")
DEPS_HELP = (
    "where the dependencies a gold patch adds are installed: the verifier's image only "
    "(default), or the agent's too (agent: it reveals the dependency, not its use)"
)


def add_deps_option(parser: Any) -> None:
    """`--deps agent|verifier` on a command that drafts tasks."""
    parser.add_argument("--deps", choices=DEPS_CHOICES, default=None, help=DEPS_HELP)


def agent_dependencies(args: Any) -> bool:
    """Whether `--deps agent` was given (drafted tasks set `agentDependencies`)."""
    return bool(args.deps == "agent")


# --- the host's ceilings: one spelling of --max-* for the commands that run the local sandbox --

_CEILING_FLAGS = (
    ("--max-cpus", "cpus", "N", float, "the most CPUs a task gets (default: this host's)"),
    ("--max-memory", "memory_mb", "MB", int, "the most memory a task gets (default: host's / -j)"),
    ("--max-storage", "storage_mb", "MB", int, "the most disk a task gets (default: free / -j)"),
    ("--max-seconds", "seconds", "S", int, "the longest timeout, or phase (default: 21600)"),
    ("--max-reruns", "reruns", "N", int, "the most --reruns (default: 10)"),
)
CEILING_FLAGS = tuple(flag for flag, *_ in _CEILING_FLAGS)
"""The `--max-*` options (a runner's options: refused where the local environment is not used)."""
RERUNS_CEILING = "--max-reruns"
"""The one `--max-*` option of a command that reruns tests (`validate`, `draft`, `run`); `eval`
and `quality` run each verifier once, so they take the others only."""


def add_ceiling_options(parser: Any, *, reruns: bool = True) -> None:
    """`--max-cpus`, `--max-memory`, `--max-storage`, `--max-seconds` and, with `reruns`,
    `--max-reruns`: the host's ceilings on what a task may ask for
    (`environments/local/ceilings.py`)."""
    for flag, _, metavar, kind, help_text in _CEILING_FLAGS:
        if reruns or flag != RERUNS_CEILING:
            parser.add_argument(flag, type=kind, metavar=metavar, help=help_text)


def given_ceilings(args: Any) -> dict[str, float]:
    """The `--max-*` options given, by `Ceilings` field (`memory_mb`: 2048).

    Raises:
        InputError: a `--max-*` value not above 0.
    """
    given: dict[str, float] = {}
    for flag, field, *_ in _CEILING_FLAGS:
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if value is None:
            continue
        if value <= 0:
            raise InputError(f"{flag} must be more than 0")
        given[field] = value
    return given


def ceilings(args: Any, *, jobs: int, workspace: Path | None) -> Ceilings:
    """The host's ceilings, its defaults for `jobs` tasks at once with workspaces under
    `workspace`, changed by the `--max-*` options given.

    Raises:
        InputError: a `--max-*` value not above 0.
    """
    from selfbench.environments.local.ceilings import Ceilings

    return Ceilings.for_host(jobs=jobs, workspace=workspace, given=given_ceilings(args))


# --- setup's environment: one spelling of the options for draft, validate, run and eval ---------

SETUP_ENV_HELP = "pass this variable (its value here) into setup only: a proxy, CA certificates"
NO_HOST_NETWORK_HELP = (
    "do not carry the host's CA bundle and proxy variables (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, "
    "HTTPS_PROXY, ...) into setup"
)


def add_setup_options(parser: Any, *, setup_env_help: str = SETUP_ENV_HELP) -> None:
    """`--setup-env NAME` and `--no-host-network-config` on a command that runs setup."""
    parser.add_argument("--setup-env", action="append", metavar="NAME", help=setup_env_help)
    # default None, not False: `validate` refuses a local-only option given under --env harbor
    parser.add_argument(
        "--no-host-network-config", action="store_true", default=None, help=NO_HOST_NETWORK_HELP
    )


def announce_host_network(enabled: bool) -> HostNetwork:
    """The host's network configuration for setup (none when `enabled` is false); what it
    carries is said once on stderr, when a setup first uses it."""
    from selfbench.environments.local.host_network import HostNetwork
    from selfbench.progress import choose_reporter

    if not enabled:
        return HostNetwork()
    return HostNetwork.detect(reporter=choose_reporter())


class SetupSpec(NamedTuple):
    """What `--setup-env` and `--no-host-network-config` ask of setup."""

    env: tuple[tuple[str, str], ...]
    """`--setup-env`'s (name, value) pairs."""
    host_network: HostNetwork
    """The host's network configuration, announced on first use (empty when refused)."""


def setup_options(args: Any) -> SetupSpec:
    """`--setup-env`'s (name, value) pairs and the host's network configuration, announced.

    Raises:
        InputError: a `--setup-env` name that is not a variable, or not set.
    """
    from selfbench.environments.local.phases import setup_env_values

    pairs = setup_env_values(args.setup_env or ())
    return SetupSpec(pairs, announce_host_network(not args.no_host_network_config))


# --- the environment: one spelling of --env, --harbor-env and --harbor for validate, run, eval --
# Each defaults to None, so that one the chosen `--env` does not use can be refused (exit 2) and
# `run --resume` can tell an option given again from one left out.

ENV_HELP = "local: this machine's sandbox (root); harbor: `harbor run` (default: local)"


def add_environment_option(parser: Any) -> None:
    """`--env local|harbor`."""
    from selfbench.environments.spec import ENVIRONMENTS

    parser.add_argument("--env", choices=ENVIRONMENTS, help=ENV_HELP)


def add_harbor_options(parser: Any) -> None:
    """`--harbor-env NAME` and `--harbor PATH`."""
    parser.add_argument(
        "--harbor-env",
        metavar="NAME",
        help="Harbor's environment: docker, modal, daytona, … (default: docker)",
    )
    parser.add_argument("--harbor", metavar="PATH", help="the harbor executable (default: harbor)")


MODEL_HELP = (
    "the model of each HARNESS or harbor:AGENT --agent given without one, such as "
    "anthropic/claude-sonnet-4-5"
)


def add_model_option(parser: Any) -> None:
    """`--model MODEL`: the model of the agents given without one (read back as `args.model`)."""
    parser.add_argument("--model", metavar="MODEL", help=MODEL_HELP)


def add_environment_options(parser: Any) -> None:
    """`--env`, `--harbor-env` and `--harbor`."""
    add_environment_option(parser)
    add_harbor_options(parser)


def environment_kind(args: Any) -> Kind:
    """The environment `--env` chose (local when not given)."""
    kind: Kind = args.env or "local"
    return kind


def refuse_unused(args: Any, kind: str, used: Mapping[str, tuple[str, ...]]) -> None:
    """Refuse the first option given that `kind` does not use; `used` lists each environment's.

    Raises:
        InputError: such an option was given.
    """
    from selfbench.environments.spec import unused_option

    given = {
        flag: getattr(args, flag[2:].replace("-", "_")) is not None
        for flags in used.values()
        for flag in flags
    }
    if (refusal := unused_option(given, kind, used)) is not None:
        raise InputError(refusal)


def environment_spec(args: Any, used: Mapping[str, tuple[str, ...]]) -> EnvironmentSpec:
    """The environment the options chose, refusing an option it does not use; under `local`,
    `--setup-env`'s values and the host's network configuration (announced).

    Raises:
        InputError: an option the environment does not use, or a `--setup-env` variable that is
            not a name or not set.
    """
    from selfbench.environments.spec import EnvironmentSpec

    kind = environment_kind(args)
    refuse_unused(args, kind, used)
    default = EnvironmentSpec()
    spec = EnvironmentSpec(
        kind=kind,
        harbor_env=default.harbor_env if args.harbor_env is None else args.harbor_env,
        harbor=default.harbor if args.harbor is None else args.harbor,
    )
    if kind != "local":
        return spec
    setup_env, host_network = setup_options(args)
    return EnvironmentSpec(spec.kind, spec.harbor_env, spec.harbor, setup_env, host_network)
