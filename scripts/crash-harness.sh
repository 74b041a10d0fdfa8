#!/usr/bin/env bash
# Stops migrations with SIGKILL or SIGTERM at random moments — some inside the final hand-over,
# some through symbolic links — and checks the store files after each (docs/reliability.md), and
# races two processes to one destination. Short mode (default, for CI): 20 runs and 5 races.
# Full mode: 200 runs and 20 races.
#   scripts/crash-harness.sh [short|full] [extra harness arguments, e.g. --seed 42 --items 50000]
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-short}"
[ $# -gt 0 ] && shift
case "$mode" in
  short) runs=20 ;;
  full) runs=200 ;;
  *) echo "usage: $0 [short|full] [--seed S] [--items K] [--keep DIR]" >&2; exit 2 ;;
esac
swift build --product cdmigrate-crash-harness
exec "$(swift build --show-bin-path)/cdmigrate-crash-harness" --runs "$runs" "$@"
