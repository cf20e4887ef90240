"""The `validate` command of the `selfbench` command line, and the runner its options choose.

`validate` is a checker: exit 0 when every bundle is accepted, 1 when one is rejected, 2 on bad
input (a runner option the chosen `--env` does not use, an unset `--setup-env` variable).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench import activity
from selfbench.cli.common import (
    CEILING_FLAGS,
    add_ceiling_options,
    add_environment_option,
    add_harbor_options,
    add_jobs_option,
    add_json_option,
    add_repo_option,
    add_setup_options,
    ceilings,
    environment_spec,
    jobs,
    print_json,
)
from selfbench.errors import EXIT_OK, EXIT_REJECTED
from selfbench.progress import choose_reporter, stage

if TYPE_CHECKING:
    from selfbench.environments.runner import Runner

__all__ = ["add_validate_command"]


_RUNNER_FLAGS = {
    "local": (
        "--logs",
        "--parity",
        "--network",
        "--keep",
        "--workspace",
        "--reruns",
        "--setup-env",
        "--no-host-network-config",
        "--strict-toolchains",
        *CEILING_FLAGS,
    ),
    "harbor": ("--logs", "--harbor-env", "--jobs-dir", "--harbor"),
}
"""The options each `--env` uses; any other runner option is refused."""


def _runner(args: argparse.Namespace) -> Runner:
    """The runner `--env` names, with the options given for it."""
    from selfbench.validate.environment import build_runner
    from selfbench.validate.local import DEFAULT_RERUNS, LocalOptions

    spec = environment_spec(args, _RUNNER_FLAGS)
    workspace = Path(args.workspace) if args.workspace else None
    local = LocalOptions(
        parity=bool(args.parity),
        network=bool(args.network),
        keep=bool(args.keep),
        workspace=workspace,
        strict_toolchains=bool(args.strict_toolchains),
        reruns=DEFAULT_RERUNS if args.reruns is None else args.reruns,
        ceilings=ceilings(args, jobs=jobs(args) or 1, workspace=workspace),
    )
    logs = Path(args.logs) if args.logs else None
    jobs_dir = None if args.jobs_dir is None else Path(args.jobs_dir)
    return build_runner(spec, logs=logs, jobs_dir=jobs_dir, local=local)


def _validate(args: argparse.Namespace) -> int:
    from selfbench.validate import validate

    workers = jobs(args) or 1
    runner = _runner(args)
    paths = [Path(path) for path in args.bundles]
    reporter = choose_reporter(verdicts=("accepted", "rejected"))
    items = stage(reporter, "validating", total=len(paths))
    with items, activity.heartbeat(reporter.candidate_progress):
        reports = validate(
            paths,
            runner=runner,
            definition=Path(args.definition) if args.definition else None,
            jobs=workers,
            repo=Path(args.repo) if args.repo else None,
            reporter=reporter,
        )
    if args.json:
        print_json([report.to_json() for report in reports])
    else:
        from selfbench.cli.report import print_validation

        print_validation(reports)
    return EXIT_OK if all(report.accepted for report in reports) else EXIT_REJECTED


def add_validate_command(commands: Any) -> None:
    """Register `validate` and its runner options on the CLI's subcommands."""
    validate = commands.add_parser("validate", help="prove bundles: nop fails, oracle passes")
    # Runner options default to None, so that one the chosen --env does not use is refused.
    validate.add_argument("bundles", nargs="+", metavar="BUNDLE_OR_TASK_DIR")
    add_repo_option(
        validate,
        required=False,
        help="each path is an authored TASK_DIR: compile it from this repository first",
    )
    add_environment_option(validate)
    add_jobs_option(validate, what="tasks validated")
    add_json_option(validate)
    validate.add_argument(
        "--definition", metavar="FILE", help="the definition of a bundle with none beside it"
    )
    validate.add_argument("--logs", metavar="DIR", help="where each task's run logs go")
    local = validate.add_argument_group("local environment")
    local.add_argument(
        "--parity",
        action="store_true",
        default=None,
        help="the original's verdict: no Beyond checks",
    )
    local.add_argument(
        "--network", action="store_true", default=None, help="let the tests reach the network"
    )
    local.add_argument("--keep", action="store_true", default=None, help="keep the workspaces")
    local.add_argument(
        "--strict-toolchains",
        action="store_true",
        default=None,
        help="reject a task whose toolchains are not the image's versions",
    )
    local.add_argument("--workspace", metavar="DIR", help="where workspaces go (default: temp dir)")
    local.add_argument(
        "--reruns",
        type=int,
        metavar="N",
        help="how many times fail-to-pass and pass-to-pass run in all (default: 3, at least 2)",
    )
    add_setup_options(local)
    add_ceiling_options(local)
    harbor = validate.add_argument_group("harbor environment")
    add_harbor_options(harbor)
    harbor.add_argument("--jobs-dir", metavar="DIR", help="Harbor's jobs directory (default: jobs)")
    validate.set_defaults(run=_validate)
