#!/usr/bin/env bash
# Install system tools with apt when they are missing: the ones named, else those the test suite
# uses (git, shellcheck).
# Python 3.12 for the Harbor venv is looked up on PATH and in pyenv; it is not installed here.
set -euo pipefail
missing=()
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(git shellcheck)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
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
