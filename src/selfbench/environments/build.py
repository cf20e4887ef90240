"""One environment spec turned into what runs a task: the validation runner (`validate`, `run`)
and the options of evaluation's local and Harbor trials (`eval`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from selfbench.environments.harbor import HarborOptions
from selfbench.environments.local.host_network import HostNetwork
from selfbench.environments.local.phases import LocalOptions
from selfbench.environments.runner import Runner
from selfbench.environments.spec import EnvironmentSpec
from selfbench.validate.harbor import HarborRunner
from selfbench.validate.local import LocalRunner

__all__ = ["build_runner", "harbor_options", "local_options"]


def local_options(
    spec: EnvironmentSpec, *, logs: Path | None, local: LocalOptions | None = None
) -> LocalOptions:
    """The local sandbox's options: `local`'s (validate's own switches), with the spec's setup
    environment and the logs directory."""
    host_network = HostNetwork() if spec.host_network is None else spec.host_network
    return replace(
        local or LocalOptions(), logs=logs, setup_env=spec.setup_env, host_network=host_network
    )


def harbor_options(
    spec: EnvironmentSpec, *, jobs_dir: Path | None, logs: Path | None = None, concurrency: int = 1
) -> HarborOptions:
    """Harbor's options: the spec's environment and executable, where its jobs go (default:
    Harbor's own `jobs`) and where each validation log is copied."""
    return HarborOptions(
        environment=spec.harbor_env,
        jobs_dir=HarborOptions().jobs_dir if jobs_dir is None else jobs_dir,
        harbor=spec.harbor,
        logs=logs,
        concurrency=concurrency,
    )


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
