"""A scripted reviewer: prints a verdict on the task in its working directory, as documented.

Usage: python scripted_reviewer.py clean | coupled FINDING... | coupled-if TEXT | malformed
       | garbage | fail | sleep SECONDS

`coupled-if TEXT` finds the task coupled while its held-out test patch holds TEXT, and clean
once a coupling repair took it out.

It reads the review brief from its standard input and checks that `$SELFBENCH_TASK` is the
directory it runs in and holds the task, so a test sees that the command got what it needs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    brief = sys.stdin.read()
    task = Path(os.environ["SELFBENCH_TASK"])
    if task.resolve() != Path.cwd().resolve() or not (task / "definition.json").is_file():
        sys.stderr.write("not run in the task directory\n")
        return 4
    sys.stderr.write(f"reviewing with a brief of {len(brief)} characters\n")
    sys.stdout.write("Thinking about the held-out tests...\n")
    verdict, findings = argv[0], argv[1:]
    if verdict == "sleep":
        time.sleep(float(findings[0]))
        return 0
    if verdict == "fail":
        return 3
    if verdict == "garbage":
        sys.stdout.write("the tests look fine to me\n")
        return 0
    if verdict == "coupled-if":
        coupled = findings[0] in (task / "test.patch").read_text(encoding="utf-8")
        verdict, findings = (
            ("coupled", [f"the tests check {findings[0]}"]) if coupled else ("clean", [])
        )
    if verdict == "malformed":
        sys.stdout.write(json.dumps({"verdict": "maybe", "findings": []}) + "\n")
        return 0
    sys.stdout.write(json.dumps({"verdict": verdict, "findings": findings}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
