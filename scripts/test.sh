#!/usr/bin/env bash
# Set up and run the whole test suite. This is the command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here, not a pass.
if [ "$status" = 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$status"
