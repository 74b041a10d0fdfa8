#!/usr/bin/env bash
# The linters every change keeps clean: swift-format (.swift-format: 120 columns) over the Swift
# sources, tests and benchmarks; ruff (ruff.toml) and mypy (bindings/python/pyproject.toml) over the
# Python. ruff and mypy are pinned and installed into build/lint-venv on first use.
#
#   scripts/lint.sh          checks; exit status 1 when anything is reported
#   scripts/lint.sh --fix    formats in place first (swift format, ruff format, ruff check --fix)
set -euo pipefail
cd "$(dirname "$0")/.."
RUFF_VERSION=0.17.5
MYPY_VERSION=2.4.1
VENV=build/lint-venv
if ! "$VENV/bin/ruff" --version 2>/dev/null | grep -q "$RUFF_VERSION" \
    || ! "$VENV/bin/mypy" --version 2>/dev/null | grep -q "$MYPY_VERSION"; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet "ruff==$RUFF_VERSION" "mypy==$MYPY_VERSION"
fi
SWIFT_PATHS=(Sources Tests Benchmarks Package.swift)
PYTHON_PATHS=(bindings/python scripts bench examples fuzz)
if [ "${1:-}" = "--fix" ]; then
    swift format format --in-place --recursive --parallel "${SWIFT_PATHS[@]}"
    "$VENV/bin/ruff" format --quiet "${PYTHON_PATHS[@]}"
    "$VENV/bin/ruff" check --quiet --fix "${PYTHON_PATHS[@]}" || true
fi
status=0
swift format lint --strict --recursive --parallel "${SWIFT_PATHS[@]}" || status=1
"$VENV/bin/ruff" format --quiet --check "${PYTHON_PATHS[@]}" || status=1
"$VENV/bin/ruff" check --quiet "${PYTHON_PATHS[@]}" || status=1
(cd bindings/python && "../../$VENV/bin/mypy" --no-error-summary cdmigrate) || status=1
[ "$status" -eq 0 ] && echo "lint: swift-format, ruff and mypy clean"
exit "$status"
