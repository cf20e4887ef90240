"""The images keep their toolchains root's (issue 25): no phase's code can plant a configuration
or a wrapper in a toolchain for a later command; setup opens only the toolchains' caches."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from selfbench.bundle.render_docker import render_agent_dockerfile, render_verifier_dockerfile
from selfbench.bundle.render_prepare import Stage, prepare_script
from test_render import make_definition

_TOOLCHAINS = ["python", "node", "bun", "go", "rust"]


@pytest.mark.parametrize("render", [render_agent_dockerfile, render_verifier_dockerfile])
def test_the_toolchain_layers_are_made_root_s_before_the_repository(
    render: Callable[..., str],
) -> None:
    definition = make_definition(toolchains=_TOOLCHAINS)
    dockerfile = render(definition, dependency_setup=False)
    layer = dockerfile.index("chmod -R go-w")
    assert 'chown -R root:root "$dir"' in dockerfile
    assert "/usr/local /opt/uv-python" in dockerfile[layer - 200 : layer]
    assert max(dockerfile.index(f"# toolchain: {name}") for name in _TOOLCHAINS) < layer
    assert layer < dockerfile.index("# the repository at its base commit")
    assert "-C /usr/local --strip-components=1 --no-same-owner" in dockerfile  # node's owners


@pytest.mark.parametrize("stage", ["base", "dependencies"])
def test_setup_opens_the_caches_and_never_a_toolchain(stage: Stage) -> None:
    script = prepare_script(stage)
    [opened] = re.findall(r"^for state in (.+); do$", script, flags=re.MULTILINE)
    assert opened.split() == [
        "/opt/uv-cache",
        "/opt/go",
        "/opt/corepack",
        "/usr/local/cargo/registry",
        "/usr/local/cargo/git",
    ]
    assert 'chmod a+rw "/usr/local/cargo/$lock"' in script
    for toolchain in ("/usr/local/rustup", "/usr/local/go", "/usr/local/bin"):
        assert toolchain not in script
