#!/usr/bin/env bash
# Runs every test: the Swift suite (XCTest), then the C API tests (under ASan + LSan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --build-tests
swift test --skip-build --disable-swift-testing
make test-c
