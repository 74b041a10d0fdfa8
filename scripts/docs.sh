#!/usr/bin/env bash
# The API references, generated from the sources' own documentation into build/docs:
#   swift/   the engine's public Swift API (DocC, from the doc comments; static HTML)
#   python/  the Python package (pdoc, from the docstrings; static HTML)
#   c/       the C API: include/cdmigrate.h (its comments are the reference) and docs/c-api.md
#   man/     the command line's man pages (from its help, as `make install` installs them)
# A public Swift declaration whose doc comment misses a parameter fails the run (DocC's warnings
# are errors), as does a Python module pdoc cannot import.
#
#   scripts/docs.sh CDMIGRATE MAN_DIR     (make docs passes the built command and its man pages)
set -euo pipefail
cd "$(dirname "$0")/.."
CLI=${1:?usage: scripts/docs.sh CDMIGRATE MAN_DIR}
MAN_DIR=${2:?usage: scripts/docs.sh CDMIGRATE MAN_DIR}
PDOC_VERSION=16.0.0
OUT=build/docs
VENV=build/docs-venv
rm -rf "$OUT" && mkdir -p "$OUT/swift" "$OUT/python" "$OUT/c" "$OUT/man"

# Swift: the symbol graph of the engine module from a debug build, then DocC.
swift build --target CDMigrate >/dev/null
MODULES="$(swift build --show-bin-path)/Modules"
GRAPHS=$(mktemp -d)
trap 'rm -rf "$GRAPHS"' EXIT
maps=()
for map in Sources/C*/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$map"); done
swift-symbolgraph-extract -module-name CDMigrate -I "$MODULES" "${maps[@]}" -Xcc -I/usr/include/libxml2 \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$GRAPHS"
docc convert --additional-symbol-graph-dir "$GRAPHS" --fallback-display-name CDMigrate \
    --fallback-bundle-identifier org.cdmigrate.CDMigrate --fallback-bundle-version "$(cat VERSION)" \
    --output-path "$OUT/swift/CDMigrate.doccarchive" --transform-for-static-hosting --warnings-as-errors

# Python: pdoc (pinned, in its own virtualenv) over the package with its library.
if ! "$VENV/bin/pdoc" --version 2>/dev/null | grep -q "$PDOC_VERSION"; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet "pdoc==$PDOC_VERSION"
fi
make --no-print-directory -C bindings/python python-package >/dev/null
PYTHONPATH=bindings/python "$VENV/bin/pdoc" --output-directory "$OUT/python" cdmigrate

# C: the header is the reference.
cp include/cdmigrate.h docs/c-api.md "$OUT/c/"

# The command line.
cp "$MAN_DIR"/*.1 "$OUT/man/"
"$CLI" --version >/dev/null

cat > "$OUT/index.html" <<HTML
<!doctype html>
<meta charset="utf-8">
<title>cdmigrate $(cat VERSION) API reference</title>
<h1>cdmigrate $(cat VERSION)</h1>
<ul>
<li><a href="swift/CDMigrate.doccarchive/documentation/cdmigrate/index.html">Swift: the CDMigrate module</a> (DocC)</li>
<li><a href="python/cdmigrate.html">Python: the cdmigrate package</a> (pdoc)</li>
<li><a href="c/cdmigrate.h">C: cdmigrate.h</a> and <a href="c/c-api.md">its guide</a></li>
<li>The command line: <a href="man/">man pages</a></li>
</ul>
HTML
echo "docs: $OUT/index.html (Swift $(find "$OUT/swift" -name '*.json' | wc -l) pages' data, Python $(find "$OUT/python" -name '*.html' | wc -l) pages, $(ls "$OUT/man" | wc -l) man pages)"
