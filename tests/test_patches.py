"""The Git patch parser on hand-written bytes, and the path rules for patches and tasks."""

from __future__ import annotations

import time

import pytest

from selfbench._paths import escapes_repository, escaping_task_paths, unsafe_patch_path
from selfbench.errors import PatchError
from selfbench.patches import (
    DEPENDENCY_MANIFESTS,
    FileChange,
    NewLine,
    Patch,
    dependency_setup_patch,
    display_path,
    is_comment,
    is_dependency_manifest,
    is_git_patch,
    new_side_hunks,
    new_sides,
    parse_patch,
    unprefixed_path,
)

MODIFIED = (
    b"diff --git a/src/app.py b/src/app.py\n"
    b"index 1111111..2222222 100644\n"
    b"--- a/src/app.py\n"
    b"+++ b/src/app.py\n"
    b"@@ -1,3 +1,3 @@ def main():\n"
    b" keep\n"
    b"-old\n"
    b"+new\n"
    b" keep\n"
)
ADDED = (
    b"diff --git a/docs/new.md b/docs/new.md\n"
    b"new file mode 100644\n"
    b"index 0000000..3333333\n"
    b"--- /dev/null\n"
    b"+++ b/docs/new.md\n"
    b"@@ -0,0 +1,2 @@\n"
    b"+# Title\n"
    b"+text\n"
)
DELETED = (
    b"diff --git a/old.txt b/old.txt\n"
    b"deleted file mode 100644\n"
    b"index 4444444..0000000\n"
    b"--- a/old.txt\n"
    b"+++ /dev/null\n"
    b"@@ -1,3 +0,0 @@\n"
    b"-one\n"
    b"-two\n"
    b"-three\n"
)
MODE_ONLY = b"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
BINARY_LITERAL = (
    b"diff --git a/bin b/bin\n"
    b"index bdc955b..350ed01 100644\n"
    b"GIT binary patch\n"
    b"literal 3\n"
    b"KcmZQzVg>*J3IGNG\n"
    b"\n"
    b"literal 2\n"
    b"JcmZQz1ONa700IC2\n"
    b"\n"
)
SIGNATURE = b"-- \n2.39.5\n\n"


def single(data: bytes) -> FileChange:
    """Parse strictly and return the one section."""
    patch = parse_patch(data)
    assert len(patch.files) == 1
    return patch.files[0]


def summary(change: FileChange) -> tuple[str | None, str | None, str, int, bool]:
    return change.old_path, change.new_path, change.status, change.changed_lines, change.binary


def strict_error(data: bytes) -> str:
    with pytest.raises(PatchError) as error:
        parse_patch(data)
    return str(error.value)


# --- statuses ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (MODIFIED, ("src/app.py", "src/app.py", "modified", 2, False)),
        (ADDED, (None, "docs/new.md", "added", 2, False)),
        (DELETED, ("old.txt", None, "deleted", 3, False)),
        (MODE_ONLY, ("run.sh", "run.sh", "mode-only", 0, False)),
        (BINARY_LITERAL, ("bin", "bin", "binary", 0, True)),
        (
            (
                b"diff --git a/bin b/bin\nindex bdc955b..350ed01 100644\n"
                b"Binary files a/bin and b/bin differ\n"
            ),
            ("bin", "bin", "binary", 0, True),
        ),
        (
            (
                b"diff --git a/img.png b/img.png\nindex 5555555..6666666 100644\n"
                b"GIT binary patch\ndelta 14\nVcmZ?wk`\n\ndelta 12\nTcmZ?w\n\n"
            ),
            ("img.png", "img.png", "binary", 0, True),
        ),
        (
            (
                b"diff --git a/new.bin b/new.bin\nnew file mode 100755\nindex 0000000..7777777\n"
                b"GIT binary patch\nliteral 3\nKcmZQzVg>*J3IGNG\n\nliteral 0\nHcmV?d00001\n\n"
            ),
            (None, "new.bin", "added", 0, True),
        ),
        (
            b"diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n",
            (None, "empty", "added", 0, False),
        ),
        (
            b"diff --git a/gone b/gone\ndeleted file mode 100644\nindex e69de29..0000000\n",
            ("gone", None, "deleted", 0, False),
        ),
        (
            (
                b"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
                b"--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n"
            ),
            ("run.sh", "run.sh", "modified", 2, False),
        ),
    ],
    ids=[
        "modified",
        "added",
        "deleted",
        "mode-only",
        "binary-literal",
        "binary-files-differ",
        "binary-delta",
        "added-binary",
        "added-empty",
        "deleted-empty",
        "mode-and-content",
    ],
)
def test_statuses(data: bytes, expected: tuple[str | None, str | None, str, int, bool]) -> None:
    change = single(data)
    assert summary(change) == expected
    assert change.path == (change.new_path or change.old_path)


def test_rename_without_changes() -> None:
    data = (
        b"diff --git a/src/old.py b/lib/new.py\n"
        b"similarity index 100%\n"
        b"rename from src/old.py\n"
        b"rename to lib/new.py\n"
    )
    change = single(data)
    assert summary(change) == ("src/old.py", "lib/new.py", "renamed", 0, False)
    assert change.paths == ("src/old.py", "lib/new.py")
    assert change.path == "lib/new.py"


def test_rename_with_edits_and_spaces_on_both_sides() -> None:
    # The unquoted header cannot be split; the rename lines name the paths.
    data = (
        b"diff --git a/my dir/a b.py b/your dir/c d.py\n"
        b"similarity index 80%\n"
        b"rename from my dir/a b.py\n"
        b"rename to your dir/c d.py\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/my dir/a b.py\t\n"
        b"+++ b/your dir/c d.py\t\n"
        b"@@ -1,2 +1,2 @@\n"
        b" same\n"
        b"-before\n"
        b"+after\n"
    )
    assert summary(single(data)) == ("my dir/a b.py", "your dir/c d.py", "renamed", 2, False)


def test_copy() -> None:
    data = (
        b"diff --git a/base.cfg b/copy.cfg\n"
        b"similarity index 90%\n"
        b"copy from base.cfg\n"
        b"copy to copy.cfg\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/base.cfg\n"
        b"+++ b/copy.cfg\n"
        b"@@ -1 +1,2 @@\n"
        b" x\n"
        b"+y\n"
    )
    assert summary(single(data)) == ("base.cfg", "copy.cfg", "copied", 1, False)


def test_old_style_rename_headers() -> None:
    data = b"diff --git a/p b/q\nsimilarity index 100%\nrename old p\nrename new q\n"
    assert summary(single(data)) == ("p", "q", "renamed", 0, False)


# --- names ---------------------------------------------------------------------------------------


def test_c_quoted_paths() -> None:
    data = (
        b'diff --git "a/x y\\t.py" "b/x y\\t.py"\n'
        b"index 1111111..2222222 100644\n"
        b'--- "a/x y\\t.py"\n'
        b'+++ "b/x y\\t.py"\n'
        b"@@ -1 +1 @@\n"
        b"-a\n"
        b"+b\n"
    )
    assert summary(single(data)) == ("x y\t.py", "x y\t.py", "modified", 2, False)


def test_octal_escapes_decode_utf8_and_keep_other_bytes() -> None:
    data = (
        b'diff --git "a/\\303\\244 \\"q\\" \\\\.txt" "b/\\377.bin"\n'
        b"similarity index 100%\n"
        b'rename from "\\303\\244 \\"q\\" \\\\.txt"\n'
        b'rename to "\\377.bin"\n'
    )
    change = single(data)
    assert change.old_path == 'ä "q" \\.txt'
    assert change.new_path == "\udcff.bin"
    assert display_path(change.new_path) == "\\xff.bin"
    assert display_path(change.old_path) == 'ä "q" \\.txt'


def test_display_path_keeps_one_problem_on_one_line() -> None:
    assert display_path("a\nb\tc\x7f") == "a\\x0ab\\x09c\\x7f"


def test_one_quoted_and_one_plain_header_name() -> None:
    data = (
        b'diff --git a/plain "b/t\\tab"\n'
        b"similarity index 100%\n"
        b"rename from plain\n"
        b'rename to "t\\tab"\n'
    )
    assert summary(single(data)) == ("plain", "t\tab", "renamed", 0, False)
    quoted_first = b'diff --git "a/t\\tab" b/plain\nold mode 100644\nnew mode 100755\n'
    assert summary(single(quoted_first)) == ("t\tab", "plain", "mode-only", 0, False)


def test_unquoted_paths_with_spaces() -> None:
    data = (
        b"diff --git a/my file.py b/my file.py\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/my file.py\t\n"
        b"+++ b/my file.py\t\n"
        b"@@ -1 +1 @@\n"
        b"-a\n"
        b"+b\n"
    )
    assert summary(single(data)) == ("my file.py", "my file.py", "modified", 2, False)


def test_header_split_in_the_middle_when_a_name_holds_b_slash() -> None:
    data = b"diff --git a/x b/y b/x b/y\nnew file mode 100644\nindex 0000000..e69de29\n"
    assert summary(single(data)) == (None, "x b/y", "added", 0, False)


def test_header_with_spaces_and_no_other_names() -> None:
    data = b"diff --git a/new file b/new file\nnew file mode 100644\nindex 0000000..e69de29\n"
    assert single(data).paths == ("new file",)


# --- counting ------------------------------------------------------------------------------------


def test_lines_that_look_like_file_headers_are_changed_lines() -> None:
    data = (
        b"diff --git a/notes.md b/notes.md\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/notes.md\n"
        b"+++ b/notes.md\n"
        b"@@ -1,4 +1,4 @@\n"
        b" ---\n"
        b"--- removed rule\n"
        b"---\n"
        b"+++ added\n"
        b"++\n"
        b" +++\n"
    )
    assert single(data).changed_lines == 4


def test_crlf_content_lines() -> None:
    data = MODIFIED.replace(b"-old\n+new\n", b"-old\r\n+new\r\n+more\r\n").replace(
        b"+1,3 @@", b"+1,4 @@"
    )
    assert single(data).changed_lines == 3


def test_crlf_throughout() -> None:
    patch = parse_patch((MODIFIED + ADDED + DELETED + MODE_ONLY).replace(b"\n", b"\r\n"))
    assert [summary(change) for change in patch.files] == [
        ("src/app.py", "src/app.py", "modified", 2, False),
        (None, "docs/new.md", "added", 2, False),
        ("old.txt", None, "deleted", 3, False),
        ("run.sh", "run.sh", "mode-only", 0, False),
    ]


def test_no_newline_markers() -> None:
    data = (
        b"diff --git a/f b/f\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/f\n"
        b"+++ b/f\n"
        b"@@ -1,2 +1,2 @@\n"
        b" a\n"
        b"-b\n"
        b"\\ No newline at end of file\n"
        b"+c\n"
        b"\\ No newline at end of file\n"
    )
    assert single(data).changed_lines == 2


def test_hunk_headers_without_counts_and_several_hunks() -> None:
    data = (
        b"diff --git a/f b/f\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/f\n"
        b"+++ b/f\n"
        b"@@ -1 +1 @@\n"
        b"-a\n"
        b"+b\n"
        b"@@ -10,0 +11 @@ section\n"
        b"+added\n"
        b"@@ -20 +20,0 @@\n"
        b"-dropped\n"
    )
    change = single(data)
    assert change.changed_lines == 4
    assert change.status == "modified"


def test_empty_lines_are_context() -> None:
    data = (
        b"diff --git a/f b/f\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/f\n"
        b"+++ b/f\n"
        b"@@ -1,5 +1,5 @@\n"
        b"\n"
        b"\n"
        b"-x\n"
        b"+y\n"
        b"\n"
        b" z\n"
    )
    assert single(data).changed_lines == 2


def test_a_mail_signature_after_the_last_hunk_is_not_counted() -> None:
    patch = parse_patch(MODIFIED + DELETED + SIGNATURE)
    assert [change.changed_lines for change in patch.files] == [2, 3]
    assert patch.changed_lines == 5


@pytest.mark.parametrize("last", [MODE_ONLY, BINARY_LITERAL, ADDED], ids=["mode", "binary", "add"])
def test_a_mail_signature_after_any_last_section_is_ignored(last: bytes) -> None:
    assert parse_patch(MODIFIED + last + SIGNATURE) == parse_patch(
        MODIFIED + last + SIGNATURE, lenient=True
    )
    assert parse_patch(MODIFIED + last + SIGNATURE).files[1].status == single(last).status


def test_lines_beyond_the_counts_of_the_last_hunk_are_ignored() -> None:
    data = _HEAD + b"@@ -1 +1 @@\n-a\n+b\n-c\n+d\n"
    assert single(data).changed_lines == 2


def test_each_hunk_must_hold_its_own_counts() -> None:
    # The first hunk holds a line too many and the second one too few: the totals agree.
    data = _HEAD + b"@@ -1 +1 @@\n-a\n+b\n c\n@@ -5,2 +5,2 @@\n d\n"
    assert strict_error(data) == "unexpected line after a hunk at line 8"
    assert strict_error(data.replace(b" c\n", b"")) == "truncated hunk at line 10"


def test_a_patch_without_a_final_newline() -> None:
    assert single(MODIFIED.removesuffix(b"\n")).changed_lines == 2
    assert single(ADDED.removesuffix(b"\n")).changed_lines == 2


def test_sections_keep_their_bytes_and_paths_their_order() -> None:
    data = MODIFIED + ADDED + DELETED + MODE_ONLY
    patch = parse_patch(data)
    assert [patch.section(change) for change in patch.files] == [
        MODIFIED,
        ADDED,
        DELETED,
        MODE_ONLY,
    ]
    assert patch.paths == ("src/app.py", "docs/new.md", "old.txt", "run.sh")
    assert patch.changed_lines == 7


def test_the_empty_patch_is_no_git_patch() -> None:
    assert not is_git_patch(b"")
    assert is_git_patch(MODIFIED)
    assert parse_patch(b"", lenient=True) == Patch(b"", ())


# --- dependency manifests -----------------------------------------------------------------------

SPEC_MANIFESTS = (
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "bun.lockb",
    "deno.lock",
    "pyproject.toml",
    "uv.lock",
    "poetry.lock",
    "Pipfile",
    "Pipfile.lock",
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
)


def test_the_manifest_list_is_the_specs() -> None:
    assert frozenset(SPEC_MANIFESTS) == DEPENDENCY_MANIFESTS


@pytest.mark.parametrize(
    "path",
    [
        *SPEC_MANIFESTS,
        "requirements.txt",
        "requirements-dev.txt",
        "requirements_test.txt",
        "web/package.json",
        "services/api/go.mod",
        "a/b/c/requirements-ci.txt",
    ],
)
def test_manifests(path: str) -> None:
    assert is_dependency_manifest(path)


@pytest.mark.parametrize(
    "path",
    [
        "package.json.bak",
        "my-package.json",
        "requirements.txt.orig",
        "requirements/dev.txt",
        "Requirements.txt",
        "cargo.toml",
        "package.json/readme.md",
        "go.mod.tmpl",
    ],
)
def test_not_manifests(path: str) -> None:
    assert not is_dependency_manifest(path)


def _manifest_section(path: bytes) -> bytes:
    return MODIFIED.replace(b"src/app.py", path)


def test_dependency_setup_patch_concatenates_manifest_sections_in_order() -> None:
    lock = _manifest_section(b"web/yarn.lock")
    pyproject = _manifest_section(b"pyproject.toml")
    renamed_away = (
        b"diff --git a/requirements-dev.txt b/notes.txt\n"
        b"similarity index 100%\n"
        b"rename from requirements-dev.txt\n"
        b"rename to notes.txt\n"
    )
    patch = parse_patch(MODIFIED + lock + ADDED + pyproject + renamed_away + DELETED)
    assert dependency_setup_patch(patch) == lock + pyproject + renamed_away


def test_dependency_setup_patch_keeps_bytes_exact() -> None:
    crlf = _manifest_section(b"package.json").replace(b"\n", b"\r\n")
    patch = parse_patch(MODIFIED + crlf)
    assert dependency_setup_patch(patch) == crlf


def test_dependency_setup_patch_is_empty_without_manifests() -> None:
    assert dependency_setup_patch(parse_patch(MODIFIED + ADDED)) == b""
    assert dependency_setup_patch(parse_patch(b"", lenient=True)) == b""


# --- strict errors -------------------------------------------------------------------------------

_HEAD = b"diff --git a/f b/f\nindex 1111111..2222222 100644\n--- a/f\n+++ b/f\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not a Git patch: it does not start with 'diff --git '"),
        (b"--- a/f\n+++ b/f\n", "not a Git patch: it does not start with 'diff --git '"),
        (b" diff --git a/f b/f\n", "not a Git patch: it does not start with 'diff --git '"),
        (_HEAD + b"@@ -1,2 +1,2 @@\n-a\n+b\n", "truncated hunk at line 8"),
        (_HEAD + b"@@ -1,2 +1,2 @@\n a\n", "truncated hunk at line 7"),
        (_HEAD + b"@@ -1 +1 @@\nxyz\n", "corrupt hunk at line 6"),
        (_HEAD + b"@@ -a +1 @@\n-a\n+b\n", "malformed hunk header at line 5"),
        (_HEAD + b"@@ -1 +1\n-a\n+b\n", "malformed hunk header at line 5"),
        (_HEAD + b"@@ -1," + b"9" * 19 + b" +1 @@\n", "malformed hunk header at line 5"),
        (_HEAD, "expected a hunk header at line 5"),
        (_HEAD + b"-a\n", "expected a hunk header at line 5"),
        (b"diff --git a/f b/f\n--- a/f\n-a\n", "expected a +++ line at line 3"),
        (
            _HEAD + b"@@ -1 +1 @@\n-a\n+b\njunk\n@@ -5 +5 @@\n-c\n+d\n",
            "unexpected line after a hunk at line 8",
        ),
        (
            b"diff --git a/f b/f\nindex 1111111..2222222 100644\ngarbage\n",
            "unrecognized line in a diff header at line 3",
        ),
        (
            b"diff --git a/f b/f\nindex 1111111..2222222 100644\n",
            "diff section changes nothing at line 1",
        ),
        (
            MODIFIED + b"diff --git a/f b/f\nold mode 100644\nnew mode 100644\n",
            "diff section changes nothing at line 10",
        ),
        (
            b'diff --git "a/x b/x\nnew file mode 100644\n',
            'unterminated quoted path "a/x b/x at line 1',
        ),
        (
            b'diff --git "a/x\\q" "b/x\\q"\nnew file mode 100644\n',
            'bad escape in quoted path "a/x\\q at line 1',
        ),
        (
            (
                b"diff --git a/f b/f\nnew file mode 100644\n"
                b'--- /dev/null\n+++ "b/f\n@@ -0,0 +1 @@\n+x\n'
            ),
            'unterminated quoted path "b/f at line 3',
        ),
        (
            b'diff --git a/f b/f\nsimilarity index 100%\nrename from a\nrename to "b\\400"\n',
            'bad escape in quoted path "b\\4 at line 4',
        ),
        (b"diff --git f f\nnew file mode 100644\n", "path without a/ or b/ prefix: 'f' at line 1"),
        (
            b"diff --git a/x y b/z w\nnew file mode 100644\n",
            "cannot tell the file's path from its diff header at line 1",
        ),
        (b'diff --git "a/f"x\nnew file mode 100644\n', "malformed diff --git line at line 1"),
    ],
    ids=[
        "empty",
        "traditional-diff",
        "leading-space",
        "truncated-hunk",
        "truncated-context",
        "corrupt-hunk",
        "hunk-header-letters",
        "hunk-header-unclosed",
        "hunk-count-too-long",
        "no-hunk",
        "no-hunk-header",
        "no-plus-line",
        "junk-between-hunks",
        "garbage-after-headers",
        "changes-nothing",
        "same-mode",
        "unterminated-quote",
        "bad-escape",
        "unterminated-plus-name",
        "octal-out-of-range",
        "no-prefix",
        "ambiguous-names",
        "malformed-header-line",
    ],
)
def test_strict_errors(data: bytes, message: str) -> None:
    assert strict_error(data) == message
    parse_patch(data, lenient=True)  # never raises


# --- lenient -------------------------------------------------------------------------------------


def test_lenient_reads_any_bytes() -> None:
    assert parse_patch(b"not a patch\n", lenient=True).files == ()
    assert parse_patch(b"\xff\xfe\0", lenient=True).files == ()


def test_lenient_finds_sections_after_a_preamble() -> None:
    mail = b"From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n---\n" + MODIFIED
    patch = parse_patch(mail, lenient=True)
    assert [summary(change) for change in patch.files] == [
        ("src/app.py", "src/app.py", "modified", 2, False)
    ]
    assert patch.section(patch.files[0]) == MODIFIED


def test_lenient_keeps_what_parses() -> None:
    truncated = _HEAD + b"@@ -1,3 +1,3 @@\n-a\n+b\n"
    patch = parse_patch(MODIFIED + truncated + ADDED, lenient=True)
    assert [summary(change) for change in patch.files] == [
        ("src/app.py", "src/app.py", "modified", 2, False),
        ("f", "f", "modified", 2, False),
        (None, "docs/new.md", "added", 2, False),
    ]


def test_lenient_takes_names_from_the_file_lines_when_the_header_is_bad() -> None:
    data = b'diff --git "a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n'
    patch = parse_patch(data, lenient=True)
    assert [summary(change) for change in patch.files] == [("f", "f", "modified", 2, False)]


def test_lenient_drops_a_section_without_a_path() -> None:
    data = b"diff --git x\nnew file mode 100644\n" + MODIFIED
    assert parse_patch(data, lenient=True).paths == ("src/app.py",)


def test_lenient_time_is_linear_in_bad_sections() -> None:
    # Each bad section used to count the lines before it for a message nobody reads.
    junk = b"diff --git a/f b/f\nindex 1111111..2222222 100644\n" * 100_000
    started = time.perf_counter()
    assert len(parse_patch(junk, lenient=True).files) == 100_000
    assert time.perf_counter() - started < 20  # about 1 s; quadratic took minutes


def test_lenient_counts_hunks_after_junk() -> None:
    data = _HEAD + b"@@ -1 +1 @@\n-a\n+b\njunk\n@@ -5 +5 @@\n-c\n+d\n"
    assert parse_patch(data, lenient=True).changed_lines == 4


# --- path rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "unsafe"),
    [
        ("src/app.py", False),
        ("a b/c.py", False),
        (".gitignore", False),
        ("docs/.gitattributes", False),
        ("sub/.gitmodules", False),
        ("x.git/y", False),
        (".github/workflows/ci.yml", False),
        ("...", False),
        ("..x/y", False),
        ("git~10/x", False),
        ("x\\..\\y", False),
        ("", True),
        ("/etc/passwd", True),
        ("../x", True),
        ("a/../b", True),
        ("a/..", True),
        ("./x", True),
        ("a/./b", True),
        ("a//b", True),
        ("a/", True),
        ("nul\0byte", True),
        (".git/config", True),
        (".GIT/hooks/pre-commit", True),
        ("src/.git/hooks/post-checkout", True),
        ("deep/er/.Git", True),
        (".git./x", True),
        (".git /x", True),
        ("git~1/config", True),
        ("x/GIT~1", True),
        (".git::$INDEX_ALLOCATION/x", True),
        ("x\\.git\\y", True),
    ],
)
def test_unsafe_patch_path(path: str, unsafe: bool) -> None:
    assert unsafe_patch_path(path) is unsafe


@pytest.mark.parametrize(
    ("path", "escapes"),
    [
        ("tests/test_x.py", False),
        (".", False),
        ("a/../b", False),
        ("a/./b", False),
        (".git/x", False),
        ("..", True),
        ("../x", True),
        ("a/../../b", True),
        ("/repo/x", True),
        ("/abs", True),
        ("a\0b", True),
    ],
)
def test_escapes_repository(path: str, escapes: bool) -> None:
    assert escapes_repository(path) is escapes


@pytest.mark.parametrize(
    ("workdir", "test_paths", "escaping"),
    [
        (".", ("tests/a.py", "a/../tests/b.py"), ()),
        ("pkg", ("../tests/a.py",), ()),
        ("pkg", ("../../a.py", "/abs/b.py", "ok.py"), ("../a.py", "/abs/b.py")),
        ("..", ("x.py",), ("..", "../x.py")),
        ("/srv", ("x.py",), ("/srv", "/srv/x.py")),
        (".", ("/abs.py", "/abs.py"), ("/abs.py",)),
    ],
)
def test_escaping_task_paths(
    workdir: str, test_paths: tuple[str, ...], escaping: tuple[str, ...]
) -> None:
    assert escaping_task_paths(workdir, test_paths) == escaping


_NO_PREFIX = (
    b"diff --git src/x.py src/x.py\r\nnew file mode 100644\n--- /dev/null\n+++ b/src/x.py\n"
    b"@@ -0,0 +1 @@\n+diff --git q q\n"
)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (MODIFIED, None),
        (MODIFIED + _NO_PREFIX, "src/x.py"),
        (_NO_PREFIX + MODIFIED, "src/x.py"),
        (b"junk\n" + _NO_PREFIX, "src/x.py"),  # any line, not only a parsed section's
        (b"diff --git a b", None),
        (b"", None),
    ],
)
def test_an_unprefixed_diff_git_line_is_found_on_any_line(data: bytes, named: str | None) -> None:
    assert unprefixed_path(data) == named
    if is_git_patch(data) and named is not None:
        assert unprefixed_path(data, parsed=parse_patch(data)) == named
        assert unprefixed_path(MODIFIED, parsed=parse_patch(MODIFIED)) is None


def test_new_sides_number_each_hunks_context_and_added_lines() -> None:
    data = (
        _HEAD + b"@@ -1,3 +1,3 @@ def main():\n keep\n-old\n+new\r\n\n"
        b"@@ -10 +10,2 @@\n-x\n+y\n+++ z\n\\ No newline at end of file\n"
    )
    assert new_sides(data) == (
        (NewLine(1, b"keep", added=False), NewLine(2, b"new", added=True),
         NewLine(3, b"", added=False)),
        (NewLine(10, b"y", added=True), NewLine(11, b"++ z", added=True)),
    )  # fmt: skip
    added = (NewLine(1, b"# Title", added=True), NewLine(2, b"text", added=True))
    assert new_sides(ADDED) == (added,)
    assert new_sides(DELETED) == ()
    contexts = [hunk.context for hunk in new_side_hunks(data)]
    assert contexts == [b"def main():", b""]
    assert [hunk.lines for hunk in new_side_hunks(data)] == list(new_sides(data))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # lines past the counts (a mail signature) are no hunk's
        (_HEAD + b"@@ -1 +1 @@\n-a\n+b\n-- \n+2.39\n", ((NewLine(1, b"b", added=True),),)),
        # a hunk cut short ends at a line that is no hunk line, and the next header starts over
        (_HEAD + b"@@ -1,3 +1,3 @@\n+a\njunk\n+b\n@@ -9 +9 @@\n+c\n",
         ((NewLine(1, b"a", added=True),), (NewLine(9, b"c", added=True),))),
        (_HEAD + b"@@ -x +1 @@\n+a\n", ()),
        (b"+not in a hunk\n", ()),
    ],
    ids=["signature", "cut-short", "bad-header", "no-hunk"],
)  # fmt: skip
def test_new_sides_are_lenient(data: bytes, expected: tuple[tuple[NewLine, ...], ...]) -> None:
    assert new_sides(data) == expected


@pytest.mark.parametrize(
    ("text", "comment"),
    [(b"  # note", True), (b"// x", True), (b" * y", True), (b">>> f()", True), (b"x = 1", False),
     (b"", False)],
)  # fmt: skip
def test_is_comment(text: bytes, comment: bool) -> None:
    assert is_comment(text) is comment
