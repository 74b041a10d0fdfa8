#!/usr/bin/env bash
# Sets up, builds, and runs the reference migrations end to end on generated example stores.
# Also builds the C libraries (build/lib) and puts the self-contained libcdmigrate.so into the
# Python package, so that `pip install ./bindings/python` works right after this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# One release build serves the examples, the command and the library: the same flags as the
# Makefile's (SWIFT_RELEASE: the static Swift runtime, no local run path; RELEASE_FLAGS), so the
# second and third builds reuse the first one's modules.
static_flags=(--static-swift-stdlib --disable-local-rpath)
release_flags=(-Xswiftc -enforce-exclusivity=unchecked)
swift build -c release "${static_flags[@]}" "${release_flags[@]}" --product cdmigrate-examples
swift build -c release "${static_flags[@]}" "${release_flags[@]}" --product cdmigrate >/dev/null
make --no-print-directory -C bindings/python python-package RELEASE_FLAGS="${release_flags[*]}" >/dev/null
".build/release/cdmigrate-examples" "$@"

# Progressive migration with the command line: Apple's own stores of five model versions (each
# version renames the attribute, so every step is inferred) planned, migrated and checked.
cli=.build/release/cdmigrate
renames=Tests/Fixtures/apple-stores/renames
demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
mkdir "$demo/released"
for v in 1.0.0 1.1.0 1.2.0 2.0.0; do
  for suffix in "" -wal -shm; do
    if [ -e "$renames/Example_v$v.sqlite$suffix" ]; then cp "$renames/Example_v$v.sqlite$suffix" "$demo/released/"; fi
  done
done
chmod u+w "$demo/released/"*
echo "== cdmigrate plan (text and Graphviz)"
"$cli" plan "$demo/released/Example_v1.0.0.sqlite" --models "$renames/Model.xcdatamodeld"
"$cli" plan "$demo/released/Example_v1.0.0.sqlite" --models "$renames/Model.xcdatamodeld" --dot
echo "== cdmigrate migrate --models"
"$cli" migrate "$demo/released/Example_v1.0.0.sqlite" --models "$renames/Model.xcdatamodeld" --to "$demo/current.sqlite" --quiet
echo "migrated to $demo/current.sqlite"
echo "== cdmigrate check"
"$cli" check "$demo/released" --models "$renames/Model.xcdatamodeld"
if [ $# -eq 0 ]; then
  echo "All five reference migrations and the command-line chain of Apple's stores passed."
else
  echo "The reference migrations asked for and the command-line chain of Apple's stores passed."
fi
