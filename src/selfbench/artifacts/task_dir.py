"""The authored task directory (SPEC §2, §4, §5): its file names, its one reader, its one writer.

An authored task is a directory of three files: `definition.json`, `test.patch` and
`gold.patch`. Their names are spelled here only. `read_definition` is the one reader of a
definition file, `read_task_files` and `read_authored_task` the one reader of a task directory,
`render_task_files` and `write_task_files` the one writer.

A task directory may come from an author's hands: each file is read with `_fs.read_bytes`,
which refuses a symbolic link in its place (`<path>: a symbolic link; not read`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from selfbench._fs import read_bytes, write_atomic
from selfbench._json import dumps_pretty, loads_strict
from selfbench.contract import LoadedDefinition, Mode, TaskDefinition, parse_definition
from selfbench.errors import TaskFileError

__all__ = [
    "DEFINITION_FILE",
    "GOLD_PATCH_FILE",
    "TASK_FILES",
    "TEST_PATCH_FILE",
    "AuthoredTask",
    "TaskFiles",
    "parse_task_files",
    "read_authored_task",
    "read_definition",
    "read_task_files",
    "render_task_files",
    "write_task_files",
]

DEFINITION_FILE = "definition.json"
TEST_PATCH_FILE = "test.patch"
GOLD_PATCH_FILE = "gold.patch"
TASK_FILES = (DEFINITION_FILE, TEST_PATCH_FILE, GOLD_PATCH_FILE)


def _read_bytes(path: Path) -> bytes:
    return read_bytes(path, error=TaskFileError)


def read_definition(path: Path, *, mode: Mode = "persisted") -> LoadedDefinition:
    """Read and validate a definition file (persisted mode unless told otherwise).

    Raises:
        TaskFileError: the file cannot be read.
        JsonError: it is not one well-formed JSON document.
        DefinitionError: it is not a valid definition.
    """
    return parse_definition(loads_strict(_read_bytes(path), source=str(path)), mode=mode)


class TaskFiles(NamedTuple):
    """The three files of an authored task directory, as bytes, unjudged."""

    directory: Path
    definition: bytes
    test_patch: bytes
    gold_patch: bytes

    @property
    def definition_path(self) -> Path:
        """Where the definition was read from (JSON errors name it)."""
        return self.directory / DEFINITION_FILE


def read_task_files(task_dir: Path) -> TaskFiles:
    """Read the three files of an authored task directory as they are.

    Raises:
        TaskFileError: a file cannot be read.
    """
    return TaskFiles(
        task_dir,
        _read_bytes(task_dir / DEFINITION_FILE),
        _read_bytes(task_dir / TEST_PATCH_FILE),
        _read_bytes(task_dir / GOLD_PATCH_FILE),
    )


class AuthoredTask(NamedTuple):
    """An authored task directory, read: the parsed definition and both patches' bytes."""

    loaded: LoadedDefinition
    test_patch: bytes
    gold_patch: bytes

    @property
    def definition(self) -> TaskDefinition:
        """The validated definition."""
        return self.loaded.definition


def read_authored_task(task_dir: Path) -> AuthoredTask:
    """Read an authored task directory: the definition in persisted mode, both patches as bytes.

    Raises:
        TaskFileError: a file cannot be read.
        JsonError: the definition is not well-formed JSON.
        DefinitionError: the definition is invalid (persisted mode).
    """
    return parse_task_files(read_task_files(task_dir))


def parse_task_files(files: TaskFiles) -> AuthoredTask:
    """Parse a task directory's files: the definition in persisted mode, the patches as bytes.

    Raises:
        JsonError: the definition is not well-formed JSON.
        DefinitionError: the definition is invalid (persisted mode).
    """
    value = loads_strict(files.definition, source=str(files.definition_path))
    return AuthoredTask(parse_definition(value), files.test_patch, files.gold_patch)


def render_task_files(
    definition: Mapping[str, Any], test_patch: bytes, gold_patch: bytes
) -> dict[str, bytes]:
    """The three files of a task directory by name, as they are written (pretty JSON, patches)."""
    return {
        DEFINITION_FILE: dumps_pretty(definition).encode("utf-8"),
        TEST_PATCH_FILE: test_patch,
        GOLD_PATCH_FILE: gold_patch,
    }


def write_task_files(
    task_dir: Path, definition: Mapping[str, Any], test_patch: bytes, gold_patch: bytes
) -> None:
    """Write the three files of a task directory into `task_dir`, each atomically.

    Raises:
        OSError: a file cannot be written.
    """
    for name, content in render_task_files(definition, test_patch, gold_patch).items():
        write_atomic(task_dir / name, content)
