#!/usr/bin/env bash
# Sets up, builds, and runs the reference migrations end to end on generated example stores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product cdmigrate-examples
".build/release/cdmigrate-examples" "$@"
