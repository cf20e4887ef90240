#!/usr/bin/env bash
# Install system tools with apt when they are missing: the ones named, else those the test suite
# uses: git, shellcheck, bwrap (bubblewrap, the local validation sandbox) and slirp4netns (its
# network for setup), pytest-3 (Debian's
# pytest, the host toolchain of the Python validation tests), chromium (the review page's
# browser test), and ip (iproute2) and openssl for the test host that serves a private registry
# over HTTPS (tests/test_host_network.py).
# Python 3.12 for the Harbor venv is looked up on PATH and in pyenv; it is not installed here.
set -euo pipefail
missing=()
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(git shellcheck bwrap slirp4netns pytest-3 chromium ip openssl)
# The Debian package that provides each tool (a tool not listed is its own package).
package_of() {
  case "$1" in
    bwrap) echo bubblewrap ;;
    pytest-3) echo python3-pytest ;;
    ip) echo iproute2 ;;
    *) echo "$1" ;;
  esac
}
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$(package_of "$tool")")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "error: missing ${missing[*]}; install them (apt-get install ${missing[*]})" >&2
    exit 2
  }
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
