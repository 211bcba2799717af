#!/usr/bin/env bash
# Set up everything the companion and its tests need, on a machine with only Python.
# Idempotent: a second run installs nothing new. Usage: bash scripts/setup.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if [ "${1:-}" = "--test" ]; then
  .venv/bin/python -m pip install -q -e '.[test]'
  # The browser tests drive Debian's Chromium through Playwright; Playwright's own
  # browser download cannot work offline, so the system package is used instead.
  if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq chromium >/dev/null \
      || echo "setup: could not install chromium; browser tests will be skipped" >&2
  fi
else
  .venv/bin/python -m pip install -q -e .
fi
