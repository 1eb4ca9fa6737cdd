#!/usr/bin/env bash
# Install what tmnic needs on Debian 12 if it is missing: apt packages, then a project-local Python venv
# with pinned tools. Idempotent and quiet when everything is present; both README commands call it.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PKGS=(build-essential cmake ninja-build verilator libgtest-dev libbenchmark-dev libibverbs-dev
          ibverbs-utils python3-pyverbs python3-scapy python3-venv tshark libsystemc-dev perftest lcov)

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Project-local venv with pinned Python tools (synthesis). Built from Debian's python3 so that the
# system pyverbs stays importable for the pyverbs tests, which run under /usr/bin/python3 directly.
VENV=.venv
REQ=scripts/requirements.txt
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQ" "$VENV/.requirements.stamp"; then
  echo "setup: creating $VENV from $REQ"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$VENV/.requirements.stamp"
fi
