"""Real git histories for the mining tests: merges, squashes, rebases, reverts and the rest."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from selfbench.mine import Candidate, mine_repository
from selfbench.mine.classify import FILE_CLASSES, classify_path
from selfbench.mine.git_history import diff_stats
from selfbench.mine.records import ChangedFile, ClassTotal

START = 1_767_225_600  # 2026-01-01T00:00:00Z
HOUR = 3600
Files = dict[str, str | bytes | None]


def lines(count: int, tag: str = "line") -> str:
    """`count` distinct lines of Python-looking text."""
    return "".join(f"{tag}_{index} = {index}\n" for index in range(count))


@dataclass
class History:
    """A repository on `main` built commit by commit, each an hour after the last."""

    path: Path
    clock: int = START
    shas: dict[str, str] = field(default_factory=dict)

    def git(self, *args: str, author: str = "Dev <dev@example.com>") -> str:
        name, email = author.removesuffix(">").split(" <")
        stamp = f"{self.clock} +0000"
        env = {
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
        }
        result = subprocess.run(
            ["git", "-C", str(self.path), *args], env=env, capture_output=True, check=True
        )
        return result.stdout.decode().strip()

    @classmethod
    def create(cls, path: Path) -> History:
        path.mkdir(parents=True, exist_ok=True)
        history = cls(path)
        history.git("init", "-q", "-b", "main")
        return history

    def write(self, files: Files) -> None:
        for name, content in files.items():
            target = self.path / name
            if content is None:
                self.git("rm", "-q", name)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
            self.git("add", name)

    def commit(self, message: str, files: Files, *, author: str = "Dev <dev@example.com>") -> str:
        self.clock += HOUR
        self.write(files)
        self.git("commit", "-q", "--allow-empty", "-m", message, author=author)
        return self.git("rev-parse", "HEAD")

    def merge(self, branch: str, message: str, commits: list[Files]) -> str:
        """Commit on a new branch from main, then merge it with --no-ff and `message`."""
        self.git("checkout", "-q", "-b", branch)
        for index, files in enumerate(commits):
            self.commit(f"work {index} on {branch}", files)
        self.git("checkout", "-q", "main")
        self.clock += HOUR
        self.git("merge", "-q", "--no-ff", "-m", message, branch)
        return self.git("rev-parse", "HEAD")

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


def build_history(path: Path) -> History:
    """Every case mining must tell apart, oldest first; `shas` names the interesting commits.

    Each change meant as a candidate adds a test file (mining keeps no change without one)."""
    h = History.create(path)
    h.shas["root"] = h.commit(
        "Initial commit",
        {"README.md": "# app\n", "src/app.py": lines(10), "tests/test_app.py": lines(3, "t")},
    )
    h.shas["pr1"] = h.merge(
        "feature-one",
        "Merge pull request #1 from octo/feature-one\n\nAdd the widget parser\n\nIt parses.",
        [{"src/app.py": lines(40), "tests/test_app.py": lines(8, "t")}],
    )
    h.shas["pr2"] = h.commit(
        "Split helpers (#2)\n\nMoves helpers into two modules.",
        {"src/a.py": lines(40, "a"), "src/b.py": lines(40, "b"), "tests/test_a.py": lines(3)},
    )
    h.shas["pr3a"] = h.commit(
        "Start the engine (#3)", {"src/c.py": lines(60, "c"), "tests/test_c.py": lines(3)}
    )
    h.shas["pr3"] = h.commit(
        "Finish the engine (#3)", {"src/d.py": lines(30, "d"), "src/e.py": lines(30, "e")}
    )
    h.shas["docs"] = h.commit("Document it (#4)", {"docs/guide.md": lines(30), "README.md": "x\n"})
    h.shas["tests"] = h.commit("More tests (#5)", {"tests/test_more.py": lines(30, "m")})
    h.shas["sync"] = h.commit(
        "Merge `stable` into `main` after the 1.2 release (#13)", {"src/fix.py": lines(30, "fx")}
    )
    h.shas["pr6"] = h.commit("Risky change (#6)", {"src/risky.py": lines(25, "r")})
    h.shas["revert"] = h.commit(
        f'Revert "Risky change (#6)"\n\nThis reverts commit {h.shas["pr6"]}.',
        {"src/risky.py": None},
    )
    h.git("checkout", "-q", "-b", "side")
    h.commit("Upstream work", {"src/upstream.py": lines(25, "u")})
    h.git("checkout", "-q", "main")
    h.shas["local"] = h.commit(
        "Local work", {"src/local.py": lines(25, "l"), "tests/test_local.py": lines(3)}
    )
    h.clock += HOUR
    h.git("merge", "-q", "--no-ff", "-m", "Merge branch 'main' of github.com:octo/app", "side")
    h.shas["merge-main"] = h.head()
    h.shas["bot"] = h.commit(
        "Bump things (#7)", {"src/x.py": lines(30, "x")}, author="dependabot[bot] <bot@example.com>"
    )
    h.shas["pr8"] = h.commit(
        "Draft work (#8)", {"src/draft.py": lines(30, "dr"), "tests/test_draft.py": lines(3)}
    )
    h.shas["pr9"] = h.commit(
        "Add a logo (#9)",
        {
            "src/logo.png": b"\x89PNG\0\1\2\3",
            "src/f.py": lines(25, "f"),
            "tests/test_f.py": lines(3),
        },
    )
    h.git("mv", "src/app.py", "src/application.py")
    h.shas["pr10"] = h.commit(
        "Rename the app module (#10)",
        {
            "src/application.py": lines(39) + "extra = 1\n",
            "src/g.py": lines(20, "g"),
            "tests/test_g.py": lines(3),
        },
    )
    h.shas["plain"] = h.commit("tweak", {"src/h.py": lines(30, "h"), "tests/test_h.py": lines(3)})
    h.shas["pr11"] = h.merge(
        "feat-gl",
        "Merge branch 'feat-gl' into 'main'\n\nGitLab title\n\nBody.\n\n"
        "See merge request grp/app!11",
        [{"src/gl.py": lines(22, "gl"), "tests/test_gl.py": lines(3)}],
    )
    h.shas["pr12"] = h.commit("Tiny fix (#12)", {"src/tiny.py": lines(5, "ti")})
    return h


def untested_candidate(repo: Path, number: int) -> Candidate:
    """A change mining excludes as `no test file a known runner runs`, as a candidate anyway:
    what a hand-written candidate file (or one mined by an older selfbench) may name, and what
    drafting must still refuse. Shaped like the newest candidate, with the change's own commits,
    title and files."""
    mined = mine_repository(repo)
    excluded = next(item for item in mined.excluded if item.source_pr == number)
    completed = excluded.commit
    base = (
        subprocess.run(
            ["git", "-C", str(repo), "rev-parse", f"{completed}^"], capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    files = tuple(
        ChangedFile(stat.path, stat.old_path, *classify_path(stat.path), stat.changed_lines,
                    stat.binary)
        for stat in diff_stats(repo, base, completed)
    )  # fmt: skip
    totals: dict[str, ClassTotal] = {
        name: ClassTotal(
            sum(f.file_class == name for f in files),
            sum(f.changed_lines for f in files if f.file_class == name),
        )
        for name in FILE_CLASSES
    }
    like = max(mined.candidates, key=lambda candidate: candidate.merged_at)
    url = like.source_url and f"{like.source_url.rsplit('/', 1)[0]}/{number}"
    return replace(
        like,
        id=f"pr-{number}",
        source_pr=number,
        source_url=url,
        base_commit=base,
        completed_commit=completed,
        title=excluded.subject.removesuffix(f" (#{number})"),
        body="",
        tests_changed=False,
        totals=totals,
        files=files,
        requests=(),
    )
