"""A file's run that printed its runner's final summary line and does not exit is stopped.

Used by the draft's provisional runs (`run.provisional_command`) and its coverage run
(`coverage.coverage_command`), each file's run under `timeout`.
"""

from __future__ import annotations

from typing import Final

from selfbench._shell import quote

__all__ = ["LINGER_SECONDS", "STOPPED", "WATCH", "stopped_by_watch", "watch_words"]

LINGER_SECONDS: Final = 60
"""How long a file's run may stay quiet after its runner printed its final summary line
(`Runner.finished_line`) before it is stopped: a test that leaves a thread blocked keeps the
interpreter from exiting (the base of a fix for a hang: python-dotenv #586's FIFO writer), and
its file's run would otherwise hold its whole limit, the per-command one at the base."""
STOPPED: Final = "selfbench: the run printed its summary and did not exit within "
"""The start of the line the watch adds to a file's output when it stops the run."""
WATCH_LINES = r"""
selfbench_watch() {
  local grace="$1" pattern="$2" out pid code size="" quiet=0 nap=0.05 last now; shift 2;
  out="$(mktemp 2>/dev/null)" || { "$@"; return; };
  "$@" >>"$out" 2>&1 & pid=$!;
  while kill -0 "$pid" 2>/dev/null; do
    sleep "$nap";
    case "$nap" in 0.05) nap=0.1;; 0.1) nap=0.25;; 0.25) nap=0.5;; *) nap=1;; esac;
    last="$(tail -n 4 -- "$out" | tr -d '\000' | grep -av '^[[:space:]]*$' | tail -n 1)";
    if ! printf '%s\n' "$last" | grep -Eaq -- "$pattern"; then size=''; continue; fi;
    now="$(wc -c <"$out")";
    if [ "$size" != "$now" ]; then size="$now"; quiet=$SECONDS; continue; fi;
    [ $((SECONDS - quiet)) -ge "$grace" ] || continue;
    printf '\n@STOPPED@%d s: stopped\n'
      "$grace" >>"$out";
    kill -TERM "$pid" 2>/dev/null;
    for nap in 1 2 3 4 5; do kill -0 "$pid" 2>/dev/null || break; sleep 1; done;
    kill -KILL -- "-$pid" 2>/dev/null; break;
  done;
  wait "$pid"; code=$?; cat -- "$out"; rm -f -- "$out"; return "$code";
};
"""
WATCH: Final = (
    " ".join(line.strip() for line in WATCH_LINES.strip().splitlines()).replace(
        "@STOPPED@", STOPPED
    )
    + " "
)
"""Runs a file's run (`timeout …`, the process group leader) with its output in a temporary
file, printed when it ends; stops it (TERM, then KILL to its group) once the last line that is
not blank matches the runner's final summary (`$2`, an extended regular expression) and the
output has not grown for `$1` seconds. Its status is the run's (143 when stopped, unless a
handler of TERM exits otherwise: a failed run, read by its output as any other). The output's
bytes are the same, only printed at the end; the run appends to its file, so what it prints as
it is stopped follows the watch's line instead of overwriting it."""


def stopped_by_watch(output: str) -> bool:
    """Whether the watch stopped the run whose output this is."""
    return f"\n{STOPPED}" in output


def watch_words(finished: str, linger: int = LINGER_SECONDS) -> str:
    """The words that run a file's run under `WATCH` (defined before it in the command), given
    the runner's final summary line `finished`; "" (no watch) where the runner has none."""
    if not finished:
        return ""
    return f"selfbench_watch {int(linger)} {quote(finished)} "
