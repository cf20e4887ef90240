"""`selfbench extract --base-image IMAGE --build-secrets`: an extracted task adapted to a local
Docker or Podman build (the Dockerfiles' base replaced; the host's CA and proxies handed to the
build by a compose file), and the export itself left as it verified."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from export_helpers import COMMIT, author_collected
from selfbench.bundle import layout
from selfbench.bundle.local_build import rebase, render_build_compose
from selfbench.bundle.render_docker import BASE_IMAGE, BUILD_SECRET, render_agent_dockerfile
from selfbench.cli import main
from selfbench.demo import build_sample_repository
from selfbench.export import RunInfo, export_run
from test_render import make_definition

IMAGE = "localhost/selfbench-base:bookworm"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local-build")
    (root / "sample").mkdir()
    collected = author_collected(root, build_sample_repository(root / "sample"), "slug-a")
    archive = root / "run.tar.gz"
    export_run(
        [collected], run=RunInfo("run-1", "https://example.com/a/b.git", COMMIT), out=archive
    )
    return archive


def test_rebase_replaces_each_stage_from_the_base_and_nothing_else() -> None:
    definition = make_definition(toolchains=["python"])
    plain = render_agent_dockerfile(definition)
    staged = render_agent_dockerfile(definition, dependency_setup=True)
    assert rebase(plain, IMAGE).splitlines()[0] == f"FROM {IMAGE}"
    assert rebase(plain, IMAGE).replace(f"FROM {IMAGE}", f"FROM {BASE_IMAGE}") == plain
    froms = re.findall(r"^FROM .*$", rebase(staged, IMAGE), flags=re.MULTILINE)
    assert froms == [f"FROM {IMAGE} AS dependencies", "FROM scratch"]
    assert rebase(f"FROM {BASE_IMAGE}extra\n", IMAGE) == f"FROM {BASE_IMAGE}extra\n"


def test_the_compose_file_hands_the_ca_as_a_secret_and_the_proxies_as_args() -> None:
    body = [line for line in render_build_compose().splitlines() if not line.startswith("#")]
    proxies = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"]
    assert body == [
        "services:",
        "  main:",  # its build only: no context, network or image of its own
        "    build:",
        "      secrets:",
        f"        - {BUILD_SECRET}",
        "      args:",  # names only: each takes the host's value, and is left out when unset
        *(f"        - {name}" for name in proxies),
        "secrets:",
        f"  {BUILD_SECRET}:",
        '    file: "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"',
    ]


def test_every_fetching_run_mounts_the_secret_and_names_it_to_the_clients() -> None:
    dockerfile = render_agent_dockerfile(make_definition(toolchains=["python", "node", "go"]))
    mount = f"RUN --mount=type=secret,id={BUILD_SECRET}"
    runs = dockerfile.split("\nRUN ")
    fetching = [run for run in runs if run.startswith(mount.removeprefix("RUN "))]
    assert len(fetching) == 5  # uv, python, node, go, and the repository's setup
    secret = f"/run/secrets/{BUILD_SECRET}"
    for run in fetching:  # the secret's default place: one mounted over a file removes it
        assert f"if [ -s {secret} ]; then export SSL_CERT_FILE={secret} " in run
        assert f"NODE_EXTRA_CA_CERTS={secret}" in run
    assert "apt-get install" in runs[1]  # the base's packages: no secret, the image's bundle
    assert not runs[1].startswith(mount.removeprefix("RUN "))


def test_extract_adapts_every_task_and_refuses_a_bad_image(
    tmp_path: Path,
    exported: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "tasks"
    command = ["extract", str(exported), "--out", str(out)]
    assert main([*command, "--base-image", IMAGE, "--build-secrets"]) == 0
    tasks = sorted(out.iterdir())
    assert tasks
    for task in tasks:
        for dockerfile in (layout.ENV_DOCKERFILE, layout.TESTS_DOCKERFILE):
            text = (task / dockerfile).read_text()
            assert text.startswith(f"FROM {IMAGE}\n")
            assert f"FROM {BASE_IMAGE}" not in text
            compose = (task / dockerfile).with_name("docker-compose.yaml")
            assert compose.read_text() == render_build_compose()
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main([*command[:2], "--out", str(bad), "--base-image", "Ubuntu\nRUN x"]) == 2
    assert capsys.readouterr().err.startswith("error: --base-image 'Ubuntu\\nRUN x': not an")
    assert not bad.exists()
