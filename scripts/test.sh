#!/usr/bin/env bash
# Runs every test: the Swift suite (XCTest), then the C API tests (under ASan + LSan), then the
# Python binding's tests (pytest, against the package installed into a virtualenv).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --build-tests
swift test --skip-build --disable-swift-testing
make test-c
# Python: builds libcdmigrate.so into the package, installs it into build/python-venv, runs pytest.
# The cross-language test drives the Swift runner and the C examples built above, and fails
# (rather than skips) when they are missing.
# pytest's exit code 5 (no tests collected) counts as a failure like any other non-zero code.
CDMIGRATE_CROSS_LANGUAGE=required make --no-print-directory -C bindings/python test
