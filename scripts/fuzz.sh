#!/usr/bin/env bash
# Runs a libFuzzer target over the engine: scripts/fuzz.sh TARGET [SECONDS] [extra libFuzzer flags…]
# Targets: value-expression, predicate, regular-expression, model-json, mapping-json, binary-plist,
# xcode-model, xcode-mapping, compiled-model.
# The engine's sources and fuzz/FuzzTargets.swift are compiled into one instrumented binary
# (.build/fuzz/cdmigrate-fuzz, rebuilt when a source is newer). Seeds come from fuzz/corpus/TARGET;
# new inputs go to .build/fuzz/corpus/TARGET, crashes to .build/fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags…]}
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
[ -d "fuzz/corpus/$target" ] || { echo "unknown target '$target' (see fuzz/corpus/)" >&2; exit 2; }
export PATH=/opt/swift/usr/bin:$PATH
out=.build/fuzz
binary=$out/cdmigrate-fuzz
mkdir -p "$out/corpus/$target" "$out/artifacts"
sources=$(find Sources/CDMigrate -name '*.swift' | sort)
if [ ! -x "$binary" ] || [ -n "$(find Sources/CDMigrate fuzz/FuzzTargets.swift -newer "$binary" -name '*.swift' | head -1)" ]; then
    echo "building $binary…" >&2
    # shellcheck disable=SC2046,SC2086
    swiftc -sanitize=fuzzer -parse-as-library -O -module-name CDMigrate -package-name cdmigrate \
        -I Sources/CSQLite -I Sources/CJansson -I Sources/CLibXML2 -I Sources/CZlib \
        $(pkg-config --cflags-only-I libxml-2.0 | sed 's/-I/-Xcc -I/g') \
        $sources fuzz/FuzzTargets.swift -o "$binary" \
        -lsqlite3 -ljansson -lxml2 -lz
fi
# The document and archive targets' seeds are tens of kilobytes; mutations stay within 8 KiB (the
# small seeds — short models, the UnCloudNotes mappings, a model cache — fit whole), or each run
# would cost milliseconds. A later -max_len among the extra flags wins.
case $target in
    xcode-model|xcode-mapping|compiled-model) set -- -max_len=8192 "$@" ;;
esac
CDMIGRATE_FUZZ_TARGET=$target exec "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/$target-" "$@" \
    "$out/corpus/$target" "fuzz/corpus/$target"
