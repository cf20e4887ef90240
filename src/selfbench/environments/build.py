"""One environment spec turned into the options of what runs a task: the local sandbox's and
Harbor's, for validation's runner (`selfbench.validate.environment`), drafting, quality and
evaluation's trials."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from selfbench.environments.harbor import HarborOptions
from selfbench.environments.local.host_network import HostNetwork
from selfbench.environments.local.phases import LocalOptions
from selfbench.environments.spec import EnvironmentSpec

__all__ = ["harbor_options", "local_options"]


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
