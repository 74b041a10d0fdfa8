#!/usr/bin/env bash
# Checks that binaries run without the Swift toolchain: every library they need (readelf's NEEDED)
# is the C library's (libc, libm, libpthread, libdl, librt, the dynamic loader), the C++ runtime
# (libstdc++, libgcc_s) or one the docs name (sqlite3, jansson, libxml2, zlib), and no run path
# (RPATH/RUNPATH) points into the toolchain.
#
#   scripts/check-needed.sh SWIFT_ROOT FILE...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SWIFT_ROOT FILE..." >&2; exit 2; }
root=$(cd "$1" && pwd -P)
toolchain=${root%/usr}
shift
status=0
for file in "$@"; do
    dynamic=$(readelf -d "$file")
    while read -r library; do
        case "$library" in
            libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
            libsqlite3.so.*|libjansson.so.*|libxml2.so.*|libz.so.*) ;;
            *) echo "$file needs $library, which is neither the C library's nor one the docs name" >&2; status=1 ;;
        esac
    done < <(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<< "$dynamic")
    if [ -n "$toolchain" ] && grep -E '\((RPATH|RUNPATH)\)' <<< "$dynamic" | grep -qF "$toolchain"; then
        echo "$file has a run path into the toolchain ($toolchain)" >&2; status=1
    fi
done
exit $status
