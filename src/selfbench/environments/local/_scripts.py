"""The scripts each local phase runs inside the sandbox, as root, with their arguments.

They do what Harbor's steps do (SPEC §5); the repository's preparation is not here but in
`bundle/render_prepare.py`, the one script the images and the local prepare phase share. `AGENT`
runs `solve.sh` (`$1` oracle or nop) and the collect command (`$2` seconds, `$3` command);
`VERIFIER` runs `tests/test.sh`, then each per-selector command (`$1` seconds for test.sh, `$2`
workdir, `$3` seconds each, `$4` log byte limit, then the commands). `phases.py` decides what is
mounted where and reads the results.

`VERIFIER` makes `/app` the verifier's, as the verifier image's build does, changing only the
entries that are not yet: an overlay's lower layer is already (`overlay.py`), so none is copied up.
"""

__all__ = ["AGENT", "VERIFIER"]

AGENT = r"""
set -uo pipefail
if [ "$1" = oracle ]; then
  chown -R agent:agent /app /opt/uv-cache
  echo "selfbench: solve.sh as agent"
  (cd /app && exec runuser -u agent -- env HOME=/home/agent bash /solution/solve.sh) </dev/null
  status=$?
  echo "$status" >/run/selfbench-status/solve
  echo "selfbench: solve.sh exited $status"
  pkill -KILL -u agent >/dev/null 2>&1 || true
fi
echo "selfbench: collect"
timeout -k 5 "$2" bash -c "$3"
status=$?
echo "$status" >/run/selfbench-status/collect
echo "selfbench: collect exited $status"
"""

VERIFIER = r"""
set -uo pipefail
find /app \( ! -user verifier -o ! -group verifier \) -exec chown -h verifier:verifier -- {} +
chown -R root:root /tests
chmod 0700 /tests
chmod 0600 /tests/test.patch
chmod 0755 /tests/test.sh
mkdir -p /logs/verifier /logs/selfbench
timeout -k 5 "$1" bash /tests/test.sh
status=$?
echo "$status" >/logs/selfbench/test.sh.code
echo "selfbench: test.sh exited $status"
workdir="$2"
seconds="$3"
limit="$4"
shift 4
index=0
for command in "$@"; do
  (cd -- "$workdir" && exec timeout -k 5 "$seconds" runuser -u verifier -- \
    env PATH="$PATH" HOME=/home/verifier bash -c "$command") \
    </dev/null 2>&1 | head -c "$limit" >"/logs/selfbench/selector-$index.log"
  echo "${PIPESTATUS[0]}" >"/logs/selfbench/selector-$index.code"
  pkill -KILL -u verifier >/dev/null 2>&1 || true
  index=$((index + 1))
done
"""
