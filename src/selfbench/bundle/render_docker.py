"""The agent image `environment/Dockerfile` and the verifier image `tests/Dockerfile`. Pure.

Definition strings reach a Dockerfile through one function only, `exec_form`: a JSON array
`RUN ["/bin/bash", "-c", SCRIPT, NAME, ARG...]` whose arguments reach the script as `$1`, `$2`.
The JSON escapes every control and non-ASCII character (so a newline cannot start a new
instruction) and `<`, `>`, `&` (so no heredoc marker appears); exec-form arguments are not
expanded by the builder. Every other line is fixed text. The repository layer is the preparation
script of `render_prepare.py`, which the local environment runs too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from selfbench.bundle import layout
from selfbench.bundle.render_prepare import (
    DEPENDENCY_PATCH,
    SNAPSHOT,
    Stage,
    prepare_arguments,
    prepare_script,
)
from selfbench.contract import TaskDefinition
from selfbench.toolchains import versions
from selfbench.toolchains.versions import TOOLCHAIN_ORDER, expand_toolchains

__all__ = [
    "APT_PACKAGES",
    "BASE_IMAGE",
    "TOOLCHAIN_ORDER",
    "exec_form",
    "expand_toolchains",
    "render_agent_dockerfile",
    "render_verifier_dockerfile",
]

BASE_IMAGE = "ubuntu:24.04"
APT_PACKAGES = (
    "bash", "build-essential", "ca-certificates", "curl", "git", "jq", "passwd", "pkg-config",
    "procps", "unzip", "xz-utils",
)  # fmt: skip
_HTML_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_ARCH = (
    'case "$(dpkg --print-architecture)" in amd64) arch={amd64} ;; arm64) arch={arm64} ;; '
    '*) echo "unsupported architecture" >&2; exit 1 ;; esac'
)

# --- quoting -----------------------------------------------------------------------------------


def _json_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=True)
    for char, escape in _HTML_UNSAFE.items():
        text = text.replace(char, escape)
    return text


def exec_form(script: str, *args: str) -> str:
    """`RUN ["/bin/bash", "-c", script, "selfbench", *args]`: how data enters a Dockerfile."""
    words = ("/bin/bash", "-c", script, "selfbench", *args)
    return "RUN [" + ", ".join(_json_string(word) for word in words) + "]"


def _run(*commands: str) -> str:
    """A shell-form RUN of fixed commands joined with `&&`, one per continuation line."""
    return "RUN " + " \\\n    && ".join(commands)


def _env(**values: str) -> str:
    return "ENV " + " \\\n    ".join(f"{name}={value}" for name, value in values.items())


# --- toolchains --------------------------------------------------------------------------------


def _uv_layer() -> str:
    installer = f"https://astral.sh/uv/{versions.UV_VERSION}/install.sh"
    return _run(
        f"curl -LsSf {installer} | env UV_INSTALL_DIR=/usr/local/bin UV_NO_MODIFY_PATH=1 sh",
        "uv --version",
    )


_LAYER_ENV: dict[str, dict[str, str]] = {
    "python": {"UV_PYTHON_INSTALL_DIR": "/opt/uv-python", "UV_PYTHON_BIN_DIR": "/usr/local/bin"},
    "node": {"COREPACK_HOME": "/opt/corepack", "PLAYWRIGHT_BROWSERS_PATH": "/opt/playwright"},
    "go": {"GOPATH": "/opt/go"},
    "rust": {"RUSTUP_HOME": "/usr/local/rustup", "CARGO_HOME": "/usr/local/cargo"},
}
"""The variables each toolchain layer sets (`ENV`), in its own layer and, when a stage is
flattened, again in the image made from it."""


def _python_layer() -> str:
    find = f"uv python find --python-preference only-managed {versions.DEFAULT_PYTHON}"
    env = _env(**_LAYER_ENV["python"])
    run = _run(
        f"uv python install {' '.join(versions.PYTHON_VERSIONS)}",
        f'ln -sf "$({find})" /usr/local/bin/python3',
        "ln -sf python3 /usr/local/bin/python",
        "python --version",
    )
    return f"{env}\n{run}"


def _node_layer() -> str:
    name = f"node-v{versions.NODE_VERSION}-linux-${{arch}}"
    url = f"https://nodejs.org/dist/v{versions.NODE_VERSION}/{name}.tar.xz"
    env = _env(**_LAYER_ENV["node"])
    run = _run(
        _ARCH.format(amd64="x64", arm64="arm64"),
        f'curl -fsSL "{url}" | tar -xJ -C /usr/local --strip-components=1 --no-same-owner',
        "mkdir -p /opt/corepack /opt/playwright",
        "corepack enable",
        "node --version",
    )
    return f"{env}\n{run}"


def _bun_layer() -> str:
    return _run(f"npm install --global bun@{versions.BUN_VERSION}", "bun --version")


def _go_layer() -> str:
    url = f"https://go.dev/dl/go{versions.GO_VERSION}.linux-${{arch}}.tar.gz"
    run = _run(
        _ARCH.format(amd64="amd64", arm64="arm64"),
        f'curl -fsSL "{url}" | tar -xz -C /usr/local --no-same-owner',
        "mkdir -p /opt/go",
        "go version",
    )
    return f"{_env(**_LAYER_ENV['go'])}\n{run}"


def _rust_layer() -> str:
    options = f"-y --no-modify-path --profile minimal --default-toolchain {versions.RUST_VERSION}"
    env = _env(**_LAYER_ENV["rust"])
    run = _run(
        f"curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- {options}",
        "rustc --version",
        "cargo --version",
    )
    return f"{env}\n{run}"


_LAYERS = {
    "uv": _uv_layer,
    "python": _python_layer,
    "node": _node_layer,
    "bun": _bun_layer,
    "go": _go_layer,
    "rust": _rust_layer,
}


_SHELL = 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]'


def _base_env() -> dict[str, str]:
    return {
        "DEBIAN_FRONTEND": "noninteractive",
        "PATH": layout.CONTAINER_PATH,
        "UV_CACHE_DIR": layout.CONTAINER_UV_CACHE,
        **dict(layout.PINNED_ENVIRONMENT),
    }


def _base(toolchains: tuple[str, ...], *, stage: str | None = None) -> list[str]:
    """The base image and the toolchain layers; `stage` names it as a build stage."""
    env = _env(**_base_env())
    apt = _run(
        "apt-get update",
        f"apt-get install -y --no-install-recommends {' '.join(APT_PACKAGES)}",
        "rm -rf /var/lib/apt/lists/*",
        "git config --system --add safe.directory '*'",
        "printf 'export PATH=%s\\n' \"$PATH\" > /etc/profile.d/00-selfbench-path.sh",
        f"mkdir -p {layout.CONTAINER_UV_CACHE}",
    )
    named = f" AS {stage}" if stage is not None else ""
    header = [f"FROM {BASE_IMAGE}{named}", _SHELL, env, apt]
    layers = [f"# toolchain: {name}\n{_LAYERS[name]()}" for name in toolchains]
    return [*header, *layers, _TOOLCHAINS_READ_ONLY]


_TOOLCHAIN_DIRECTORIES = ("/usr/local", "/opt/uv-python")
_TOOLCHAINS_READ_ONLY = (
    "# the toolchains are root's: no user can plant a wrapper or a configuration in them\n"
    + _run(
        f"for dir in {' '.join(_TOOLCHAIN_DIRECTORIES)}; do "
        'if [ -d "$dir" ]; then chown -R root:root "$dir" && chmod -R go-w "$dir"; fi; done'
    )
)
"""Where the toolchain layers install (uv, python, node, bun, go, rustup and cargo's home),
made root's and writable by no other user; setup then opens only their caches
(`render_prepare`)."""


# --- the repository ----------------------------------------------------------------------------
# The preparation script (`render_prepare`) reaches each Dockerfile through `exec_form`, like
# every definition string: a JSON exec-form RUN needs no BuildKit (a heredoc would need the
# `dockerfile:1.4` syntax, which a builder without BuildKit rejects), cannot be broken out of,
# and passes the script and its arguments to bash exactly as the local environment does.


def _context_name(bundle_path: str) -> str:
    """A bundle file's name inside its image's build context (its own directory)."""
    return bundle_path.rpartition("/")[2]


def _stage(stage: Stage, *args: str) -> str:
    return exec_form(prepare_script(stage), *args)


def _repository(
    definition: TaskDefinition, toolchains: tuple[str, ...], snapshot: str
) -> list[str]:
    return [
        "# the repository at its base commit, set up (the local environment runs the same script)",
        f"COPY {_context_name(snapshot)} {SNAPSHOT}",
        _stage("base", *prepare_arguments(definition, toolchains)),
        f"RUN rm {SNAPSHOT}",
    ]


# --- the two images ----------------------------------------------------------------------------


def _document(sections: Iterable[str]) -> str:
    return "\n".join(sections) + "\n"


def _flattened(stage: str, toolchains: tuple[str, ...]) -> list[str]:
    """A new image holding the files of build stage `stage` and none of its layers (what a
    later step of it removed is in none), with the environment its instructions set."""
    env = {**_base_env()}
    for name in toolchains:
        env.update(_LAYER_ENV.get(name, {}))
    return [
        "# the agent's image: the files of that stage, none of its layers (the patch is in none)",
        "FROM scratch",
        f"COPY --from={stage} / /",
        _SHELL,
        _env(**env),
    ]


def render_agent_dockerfile(definition: TaskDefinition, *, dependency_setup: bool = False) -> str:
    """`environment/Dockerfile`: the base snapshot, set up, for the agent; no held-out data.

    With `dependency_setup` (the definition's `agentDependencies` and a gold patch that touches
    a manifest), the tree is set up in a build stage that also runs the stage `dependencies`
    (from `environment/dependency-setup.patch`), and the agent's image is made of that stage's
    files alone: the dependencies the gold adds are installed, while neither its manifests nor
    the patch are in any layer of the image.
    """
    toolchains = expand_toolchains(definition.toolchains)
    user = layout.AGENT_USER
    tail = [
        "# the agent starts from the base tree (plus ignored dependencies); its base git dir is",
        "# kept root-only for the collect step",
        _stage("agent"),
        _run(
            f"useradd --create-home --shell /bin/bash {user}",
            f"chown -R {user}:{user} {layout.CONTAINER_APP} {layout.CONTAINER_UV_CACHE}",
        ),
        f"USER {user}",
        f"WORKDIR {layout.CONTAINER_APP}",
    ]
    repository = _repository(definition, toolchains, layout.ENV_SNAPSHOT)
    if not dependency_setup:
        return _document([*_base(toolchains), *repository, *tail])
    stage = "dependencies"
    dependencies = _dependency_layer(definition, toolchains, layout.ENV_DEPENDENCY_PATCH)
    flat = _flattened(stage, toolchains)
    return _document([*_base(toolchains, stage=stage), *repository, *dependencies, *flat, *tail])


def _dependency_layer(
    definition: TaskDefinition, toolchains: tuple[str, ...], patch: str = layout.DEPENDENCY_PATCH
) -> list[str]:
    return [
        "# the gold patch's dependency manifests: install, then restore only the patched paths",
        f"COPY {_context_name(patch)} {DEPENDENCY_PATCH}",
        _stage("dependencies", *prepare_arguments(definition, toolchains)),
        f"RUN rm {DEPENDENCY_PATCH}",
    ]


def _verifier_tail() -> list[str]:
    user, tests = layout.VERIFIER_USER, layout.CONTAINER_TESTS
    test_sh = f"{tests}/{_context_name(layout.TEST_SH)}"
    copy = f"COPY {_context_name(layout.TEST_SH)} {_context_name(layout.TEST_PATCH)} {tests}/"
    return [
        "# the verifier: runs the held-out tests as an unprivileged user",
        _run(
            f"useradd --create-home --shell /bin/bash {user}",
            f"mkdir -p {layout.CONTAINER_SELFBENCH}",
            f"chmod 0700 {layout.CONTAINER_SELFBENCH}",
            f"chown -R {user}:{user} {layout.CONTAINER_APP}",
        ),
        copy,
        _run(
            f"chown -R root:root {tests}",
            f"chmod 0700 {tests}",
            f"chmod 0600 {layout.CONTAINER_TEST_PATCH}",
            f"chmod 0755 {test_sh}",
        ),
        f"WORKDIR {layout.CONTAINER_APP}",
    ]


def render_verifier_dockerfile(definition: TaskDefinition, *, dependency_setup: bool) -> str:
    """`tests/Dockerfile`: the same base, plus the gold patch's dependencies and the verifier."""
    toolchains = expand_toolchains(definition.toolchains)
    body = [*_base(toolchains), *_repository(definition, toolchains, layout.TESTS_SNAPSHOT)]
    if dependency_setup:
        body.extend(_dependency_layer(definition, toolchains))
    return _document([*body, *_verifier_tail()])
