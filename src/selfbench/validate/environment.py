"""The validation runner of the environment a command chose (`validate`, `run`)."""

from __future__ import annotations

from pathlib import Path

from selfbench.environments.build import harbor_options, local_options
from selfbench.environments.local.phases import LocalOptions
from selfbench.environments.runner import Runner
from selfbench.environments.spec import EnvironmentSpec
from selfbench.validate.harbor import HarborRunner
from selfbench.validate.local import LocalRunner

__all__ = ["build_runner"]


def build_runner(
    spec: EnvironmentSpec,
    *,
    logs: Path | None,
    jobs_dir: Path | None = None,
    local: LocalOptions | None = None,
) -> Runner:
    """The validation runner of the spec's environment."""
    if spec.kind == "harbor":
        return HarborRunner(harbor_options(spec, jobs_dir=jobs_dir, logs=logs))
    return LocalRunner(local_options(spec, logs=logs, local=local))
