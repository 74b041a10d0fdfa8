#!/usr/bin/env bash
# Runs a command as it runs on a machine without the Swift toolchain: in a mount namespace of its
# own where the toolchain's folder is an empty tmpfs, with PATH and LD_LIBRARY_PATH free of it.
#
#   scripts/without-toolchain.sh SWIFT_ROOT COMMAND [ARGUMENT]...
#
# SWIFT_ROOT is the toolchain's usr folder (where bin/swift is). Its parent is hidden when SWIFT_ROOT
# ends in /usr (/opt/swift/usr: /opt/swift); a toolchain installed into /usr itself hides only its
# Swift libraries (/usr/lib/swift, /usr/lib/swift_static), since the C library lives beside them.
#
# The namespace is made with `unshare --user --map-root-user --mount` (works unprivileged where user
# namespaces are allowed), else `unshare --mount` (root). Where neither is permitted (a container
# without the capability), the command runs with the toolchain in place but with the dynamic
# loader's log (LD_DEBUG=files) checked afterwards: any library loaded from the toolchain fails the
# run. A note on standard error says which of the two happened. WITHOUT_TOOLCHAIN=loader forces
# the second way (to try it where namespaces work).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SWIFT_ROOT COMMAND [ARGUMENT]..." >&2; exit 2; }
root=$(cd "$1" && pwd -P)
shift

hidden=()
case "$root" in
    /usr) for d in /usr/lib/swift /usr/lib/swift_static; do [ -d "$d" ] && hidden+=("$d"); done ;;
    */usr) hidden=("${root%/usr}") ;;
    *) hidden=("$root") ;;
esac
[ ${#hidden[@]} -gt 0 ] || { echo "without-toolchain: no toolchain folder to hide under $root" >&2; exit 2; }

# PATH without any folder inside the hidden ones.
path=""
IFS=: read -ra parts <<< "${PATH:-/usr/bin:/bin}"
for p in "${parts[@]}"; do
    keep=1
    for h in "${hidden[@]}"; do case "$p" in "$h"|"$h"/*) keep=0 ;; esac; done
    [ $keep -eq 1 ] && path="${path:+$path:}$p"
done

# Inside the namespace: an empty tmpfs over each hidden folder, a check that the toolchain is gone,
# then the command.
inner='
set -e
for h in $CDM_HIDDEN; do mount -t tmpfs -o size=64k,mode=0755 cdmigrate-no-toolchain "$h"; done
for h in $CDM_HIDDEN; do [ -z "$(ls -A "$h")" ] || { echo "without-toolchain: $h is still visible" >&2; exit 2; }; done
unset CDM_HIDDEN
exec "$@"'

for flags in "--user --map-root-user --mount" "--mount"; do
    [ "${WITHOUT_TOOLCHAIN:-}" = loader ] && break
    # shellcheck disable=SC2086
    if unshare $flags sh -c "mount -t tmpfs -o size=64k cdmigrate-probe '${hidden[0]}'" 2>/dev/null; then
        echo "without-toolchain: ${hidden[*]} hidden (unshare $flags)" >&2
        # shellcheck disable=SC2086
        exec env -u LD_LIBRARY_PATH PATH="$path" CDM_HIDDEN="${hidden[*]}" unshare $flags sh -c "$inner" sh "$@"
    fi
done

# No namespace: run in place and check what the dynamic loader loaded (every process of the run
# writes LOG.<pid>).
echo "without-toolchain: unshare is not permitted here; running with ${hidden[*]} in place and checking the dynamic loader's log instead" >&2
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
status=0
env -u LD_LIBRARY_PATH PATH="$path" LD_DEBUG=files LD_DEBUG_OUTPUT="$log/ld" "$@" || status=$?
for h in "${hidden[@]}"; do
    if grep -hF "$h/" "$log"/ld.* 2>/dev/null | head -5 | grep .; then
        echo "without-toolchain: libraries were loaded from the toolchain ($h)" >&2
        exit 1
    fi
done
ls "$log"/ld.* >/dev/null 2>&1 || { echo "without-toolchain: the dynamic loader wrote no log" >&2; exit 1; }
exit $status
