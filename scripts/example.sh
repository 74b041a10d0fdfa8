#!/usr/bin/env bash
# Sets up, builds, and runs the reference migrations end to end on generated example stores.
# Also builds the C libraries (build/lib) and puts the self-contained libcdmigrate.so into the
# Python package, so that `pip install ./bindings/python` works right after this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product cdmigrate-examples
make --no-print-directory -C bindings/python python-package >/dev/null
".build/release/cdmigrate-examples" "$@"
