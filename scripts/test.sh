#!/usr/bin/env bash
# Runs every test: the Swift suite (XCTest; again under AddressSanitizer, the threaded tests under
# ThreadSanitizer), then the C API tests (under ASan + LSan), then the Python binding's tests
# (pytest, against the package installed into a virtualenv).
#
#   scripts/test.sh           everything (what CI runs: about 20 minutes on 2 cores)
#   scripts/test.sh --quick   the every-day subset: build, the Swift suite, the C API tests, the
#                             Python tests and the linters (a few minutes; no sanitizers, fuzzers,
#                             crash harness, benchmarks, wheel or toolchain-free runs)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
    --quick) quick=1 ;;
    "") ;;
    *) echo "usage: scripts/test.sh [--quick]" >&2; exit 64 ;;
esac
scripts/setup.sh
# The engine's folders use only folders below them (docs/architecture.md).
python3 scripts/folder-dependencies.py >/dev/null
# swift-format, ruff and mypy (scripts/lint.sh --fix formats in place).
scripts/lint.sh
swift build --build-tests
swift test --skip-build --disable-swift-testing
if [ "$quick" -eq 1 ]; then
    make test-c
    make --no-print-directory -C bindings/python test
    echo "test.sh --quick: build, Swift, C, Python and linters passed"
    exit 0
fi
# The Swift suite again under AddressSanitizer, and the threaded tests under ThreadSanitizer
# (each in a build folder of its own).
swift build --build-tests --sanitize=address --scratch-path .build-asan
# With LeakSanitizer: Tests/swift-lsan.supp names the few objects XCTest and Foundation themselves
# never free (each entry says why); nothing of cdmigrate is suppressed.
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/Tests/swift-lsan.supp:print_suppressions=0 \
    swift test --skip-build --disable-swift-testing --sanitize=address --scratch-path .build-asan
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
swift test --skip-build --disable-swift-testing --sanitize=thread --scratch-path .build-tsan --filter '^CDMigrateTests\.Concurrent'
make test-c
# Robustness: the crash harness (short: 20 migrations stopped by SIGKILL or SIGTERM, some in the
# hand-over or through links; 5 races for one destination) and
# each libFuzzer target for 10 seconds (docs/reliability.md has the full runs).
scripts/crash-harness.sh short
for target in value-expression predicate regular-expression model-json mapping-json binary-plist xcode-model xcode-mapping compiled-model; do
    scripts/fuzz.sh "$target" 10 >/dev/null 2>&1 || { echo "fuzz target $target failed: scripts/fuzz.sh $target 10" >&2; exit 1; }
    echo "fuzz $target: 10 s, no crash"
done
# The benchmark at 2,000 rows: every path runs and gives the same rows (figures are not judged).
python3 bench/run.py --quick
# The fleet benchmark on a few stores: the CLI and Python fleets run with 1 and 2 workers.
python3 bench/fleet.py --quick
# Python: builds libcdmigrate.so into the package, installs it into build/python-venv, runs pytest.
# The cross-language test drives the Swift runner and the C examples built above, and fails
# (rather than skips) when they are missing.
# pytest's exit code 5 (no tests collected) counts as a failure like any other non-zero code.
# FLEET=1 installs dask and distributed into the virtualenv: the Dask example's test must run.
CDMIGRATE_CROSS_LANGUAGE=required CDMIGRATE_FLEET=required make --no-print-directory -C bindings/python test FLEET=1
# The wheel: manylinux-tagged by auditwheel, carrying the stripped library, its vendored libraries and
# their licences, installed into a fresh virtualenv and called; the sdist: sources only.
make --no-print-directory -C bindings/python test-wheel
# Without the Swift toolchain (hidden by an empty mount over its folder): the release tarball's
# command (migrate, check, a C policy library), a C host linked through its cdmigrate-static.pc, and
# the wheel just built with a Python policy.
make --no-print-directory test-standalone
# The API references (DocC, pdoc, the header, the man pages) build, with no undocumented parameter
# in the Swift API (scripts/docs.sh).
make --no-print-directory docs
