"""The repository's preparation: one script for the images and the local environment. Pure.

The two images' repository layers (`render_docker.py`) and the local environment's prepare
phases (`environments/local/phases.py`) run the same text, rendered here, with the same
arguments, so their parity is structural. Three stages:

* `base`: unpack the snapshot into `/app`, commit it as one base commit (locally, when an
  earlier setup left a dependency seed, copy it in: `SEED`), run `setupCommand` with
  `bash -lc` from the workdir, then the toolchains' steps after setup (python: every `.venv`
  under `/app` gets `wheel`, and `setuptools>=70,<82` unless it has a 70 or later) and the
  toolchains' caches (`/opt/uv-cache`,
  `/opt/go`, `/opt/corepack`, cargo's registry) opened to the unprivileged users, never the
  toolchains themselves;
* `dependencies` (the verifier's tree, when the gold patch touches a manifest): apply the
  dependency-setup patch, run the same setup again, then restore only what that patch changed:
  each path it touches is checked out from the base commit, or deleted when the patch added it.
  Whatever setup installed (`.venv`, `node_modules`) stays, ignored by `.gitignore` or not;
* `agent` (the agent's tree): the git dir reduced to its format (`SAFE_GIT`: no configuration,
  hook or attributes that setup left runs in a later phase), back to the base tree (ignored
  files stay) and the root-only copy of the base git dir that the collect step diffs against.

`base` and `dependencies` take `$1` the workdir, `$2` `setupCommand`, `$3` the toolchains whose
steps run, space-separated (`prepare_arguments`); `agent` takes none. The snapshot and the patch
are read from `SNAPSHOT` and `DEPENDENCY_PATCH`, where each Dockerfile copies them and the local
environment binds them read-only.
"""

from __future__ import annotations

from typing import Literal

from selfbench._shell import quote
from selfbench.bundle import layout
from selfbench.bundle.render_scripts import SAFE_GIT, container_workdir
from selfbench.contract import TaskDefinition

__all__ = [
    "CARGO_CACHES",
    "DEPENDENCY_PATCH",
    "SEED",
    "SNAPSHOT",
    "STAGES",
    "Stage",
    "prepare_arguments",
    "prepare_script",
]

Stage = Literal["base", "dependencies", "agent"]
STAGES: tuple[Stage, ...] = ("base", "dependencies", "agent")

SNAPSHOT = "/tmp/selfbench-repo.tar.gz"  # noqa: S108 - a build input, removed after its stage
"""Where the stage `base` reads the repository snapshot (a private tmpfs locally)."""
DEPENDENCY_PATCH = "/tmp/selfbench-dependency-setup.patch"  # noqa: S108 - as SNAPSHOT
"""Where the stage `dependencies` reads `tests/dependency-setup.patch`."""
SEED = "/run/selfbench-seed"
"""Where the stage `base` finds a dependency seed (`environments/local/seeds.py`): locally, and
only when an earlier setup of the same manifests left one (`prepare_script(seeded=True)`); never
in an image."""

_APP = layout.CONTAINER_APP
_CARGO_HOME = "/usr/local/cargo"
CARGO_CACHES = (f"{_CARGO_HOME}/registry", f"{_CARGO_HOME}/git")
"""Cargo's download caches, inside its home (a rust task's tool state locally)."""
_SHARED_STATE = (layout.CONTAINER_UV_CACHE, "/opt/go", "/opt/corepack", *CARGO_CACHES)
"""The caches that setup fills as root and the agent and verifier users write to (each phase's
own copy locally, each container's own in the images). The toolchains themselves are not among
them: `/usr/local/rustup`, cargo's home with its `bin` and `config.toml`, `/usr/local/go`, node's
and uv's stay root's, so no phase's code can plant a configuration or a wrapper that a later
command runs."""
_CARGO_LOCKS = (".package-cache", ".package-cache-mutate")
"""The lock files cargo takes in its home, made by setup and opened to every user (cargo can
then fetch into its caches in a home it cannot write)."""

_HEADER = """\
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1
"""

_BASE = f"""\
mkdir -p {_APP}
tar -xzf {SNAPSHOT} -C {_APP} --no-same-owner
git -C {_APP} init -q --initial-branch=main
git -C {_APP} config user.name selfbench
git -C {_APP} config user.email selfbench@localhost
git -C {_APP} add --all --force
GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \\
  git -C {_APP} commit -q --no-verify --no-gpg-sign --allow-empty -m 'selfbench base'
"""

_SEED = f"""\
if [ -d {SEED} ]; then
  # an earlier setup's installed dependencies, where this tree has nothing of its own
  app="$(cd {_APP} && pwd -P)"
  (cd {SEED} && find . -mindepth 1 -type d \\( -name .venv -o -name node_modules \\) \\
    -prune -print0) |
    while IFS= read -r -d '' seeded; do
      seeded="${{seeded#./}}"
      parent="$(dirname -- "$seeded")"
      want="$app"
      [ "$parent" = . ] || want="$app/$parent"
      if [ ! -e "{_APP}/$seeded" ] && [ ! -L "{_APP}/$seeded" ] && [ -d "{_APP}/$parent" ] &&
        [ "$(cd -- "{_APP}/$parent" && pwd -P)" = "$want" ]; then
        cp -a --reflink=auto -- "{SEED}/$seeded" "{_APP}/$seeded"
        echo "selfbench: seeded $seeded from an earlier setup of the same manifests"
      fi
    done
fi
"""

SETUPTOOLS_RECENT = 'import setuptools as s, sys; sys.exit(int(s.__version__.split(".")[0]) < 70)'
"""Exits 0 in a Python whose setuptools is 70 or later (the setup leaves it alone)."""

_SETUP = f"""\
echo "selfbench: setup: $2"
selfbench_setuptools_recent={quote(SETUPTOOLS_RECENT)}
(cd -- "$1" && exec /bin/bash -lc "$2")
case " $3 " in
  *" python "*)
    # every virtual environment under {_APP} gets wheel, and setuptools>=70 where it has
    # none or an older one (one that still has pkg_resources: setuptools 82 dropped it, and
    # projects' tests import it; a newer one already there is left alone); uv trusts the
    # system's certificates (the image's ca-certificates, the host's locally)
    export UV_SYSTEM_CERTS=1
    find {_APP} -name .venv -type d -prune -print0 | while IFS= read -r -d '' venv; do
      if [ -x "$venv/bin/python" ]; then
        if "$venv/bin/python" -c "$selfbench_setuptools_recent" 2>/dev/null; then
          uv pip install --python "$venv/bin/python" wheel
        else
          uv pip install --python "$venv/bin/python" 'setuptools>=70,<82' wheel
        fi
      fi
    done
    ;;
esac
# the toolchains' caches, opened to every user; the toolchains stay root's (read-only mounts,
# locally, are left as they are)
if [ -d {_CARGO_HOME} ] && [ -w {_CARGO_HOME} ]; then
  mkdir -p {_CARGO_HOME}/registry {_CARGO_HOME}/git
  for lock in {" ".join(_CARGO_LOCKS)}; do
    if [ ! -L "{_CARGO_HOME}/$lock" ]; then
      touch "{_CARGO_HOME}/$lock" && chmod a+rw "{_CARGO_HOME}/$lock"
    fi
  done
fi
for state in {" ".join(_SHARED_STATE)}; do
  if [ -d "$state" ] && [ ! -L "$state" ]; then
    find "$state" ! -type l -writable -exec chmod a+rwX {{}} +
  fi
done
"""

_DEPENDENCIES_BEFORE = f"""\
# the paths the patch touches: a throwaway index of the base commit, with the patch applied
index="$(mktemp -d)"
touched="$index/paths"
GIT_INDEX_FILE="$index/index" git -C {_APP} read-tree HEAD
GIT_INDEX_FILE="$index/index" git -C {_APP} apply --cached --binary --whitespace=nowarn \\
  {DEPENDENCY_PATCH}
GIT_INDEX_FILE="$index/index" git -C {_APP} diff --cached --no-renames --name-only -z HEAD \\
  >"$touched"
git -C {_APP} apply --binary --whitespace=nowarn {DEPENDENCY_PATCH}
"""

_DEPENDENCIES_AFTER = f"""\
# back to the base tree for those paths only: what setup installed stays
while IFS= read -r -d '' path; do
  if git -C {_APP} cat-file -e "HEAD:$path" 2>/dev/null; then
    git --literal-pathspecs -C {_APP} checkout -q HEAD -- "$path"
  else
    rm -f -- "{_APP}/$path"
    parent="$(dirname -- "$path")"
    if [ "$parent" != . ] && [ -d "{_APP}/$parent" ]; then
      (cd {_APP} && rmdir -p --ignore-fail-on-non-empty -- "$parent")
    fi
  fi
done <"$touched"
rm -rf -- "$index"
"""

_AGENT = f"""\
safe_git_dir {_APP}/.git
safe_git -C {_APP} reset -q --hard HEAD
safe_git -C {_APP} clean -fdq
mkdir -p {layout.CONTAINER_SELFBENCH}
cp -a {_APP}/.git {layout.CONTAINER_BASE_GIT}
chown -R root:root {layout.CONTAINER_SELFBENCH}
chmod 0700 {layout.CONTAINER_SELFBENCH} {layout.CONTAINER_BASE_GIT}
"""

_SCRIPTS: dict[Stage, str] = {
    "base": _HEADER + _BASE + _SETUP,
    "dependencies": _HEADER + _DEPENDENCIES_BEFORE + _SETUP + _DEPENDENCIES_AFTER,
    "agent": _HEADER + SAFE_GIT + _AGENT,
}


def prepare_script(stage: Stage, *, seeded: bool = False) -> str:
    """The bash text of one preparation stage (run as root, `bash -c TEXT selfbench ARGS`);
    `seeded`: the local environment's `base` from a dependency seed at `SEED`, the images' text
    with one step more between the base commit and setup."""
    if seeded and stage == "base":
        return _HEADER + _BASE + _SEED + _SETUP
    return _SCRIPTS[stage]


def prepare_arguments(
    definition: TaskDefinition, toolchains: tuple[str, ...]
) -> tuple[str, str, str]:
    """The arguments of the stages `base` and `dependencies`: the workdir, `setupCommand`, and
    the toolchains whose steps after setup run (the expanded declared ones)."""
    return (container_workdir(definition), definition.setupCommand, " ".join(toolchains))
