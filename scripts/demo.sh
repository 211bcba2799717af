#!/usr/bin/env bash
# Set up and run the companion on the bundled sample game; no camera needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/companion demo "$@"
