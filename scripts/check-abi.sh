#!/bin/sh
# Checks the shared library's ABI: its SONAME, that every exported symbol is a cdm_* function of
# the version node, that every function the headers declare is exported, and that nothing else is.
#
#   scripts/check-abi.sh LIBRARY SONAME NODE HEADER [HEADER…]
#   e.g. scripts/check-abi.sh build/lib/libcdmigrate.so.0.1.0 libcdmigrate.so.0 CDMIGRATE_0 include/cdmigrate.h
set -eu
lib=$1 soname=$2 node=$3
shift 3
status=0
fail() { echo "check-abi: $*" >&2; status=1; }

found=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$found" = "$soname" ] || fail "$lib has SONAME '$found', not '$soname'"

# objdump -T: the defined dynamic symbols (not *UND*), as "version name".
# A visibility mark (".protected", which Swift's @_cdecl functions get) may sit between the two.
exports=$(objdump -T "$lib" | awk '$0 ~ /^[0-9a-f]+ / && $0 !~ /\*UND\*/ {
  v = $(NF-1); if (v ~ /^\.(protected|hidden)$/) v = $(NF-2); print v, $NF }')
[ -n "$exports" ] || fail "$lib exports nothing"
echo "$exports" | while read -r version name; do
  if [ "$name" = "$node" ] && [ "$version" = "$node" ]; then continue; fi   # the node's own entry
  case $name in cdm_*) ;; *) echo "check-abi: $lib exports '$name', which is not cdm_*" >&2; exit 1 ;; esac
  [ "$version" = "$node" ] || { echo "check-abi: $name has version '$version', not $node" >&2; exit 1; }
done || status=1

# Declared functions: lines that start a declaration at column 0 (not typedefs, not inline helpers).
declared=$(cat "$@" | grep -E '^[a-z][a-z0-9_ ]*[ *]cdm_[a-z0-9_]+\(' | grep -vE '^(typedef|static)' \
  | sed -E 's/^[^(]*[ *](cdm_[a-z0-9_]+)\(.*/\1/' | sort -u)
exported=$(echo "$exports" | awk -v node="$node" '$2 != node { print $2 }' | sort -u)
missing=$(comm -23 "$(printf '%s\n' "$declared" > "${TMPDIR:-/tmp}/cdm-declared.$$"; echo "${TMPDIR:-/tmp}/cdm-declared.$$")" \
                   "$(printf '%s\n' "$exported" > "${TMPDIR:-/tmp}/cdm-exported.$$"; echo "${TMPDIR:-/tmp}/cdm-exported.$$")")
extra=$(comm -13 "${TMPDIR:-/tmp}/cdm-declared.$$" "${TMPDIR:-/tmp}/cdm-exported.$$")
rm -f "${TMPDIR:-/tmp}/cdm-declared.$$" "${TMPDIR:-/tmp}/cdm-exported.$$"
[ -z "$missing" ] || fail "declared but not exported: $(echo $missing)"
[ -z "$extra" ] || fail "exported but declared in no header: $(echo $extra)"

if [ $status -eq 0 ]; then
  echo "check-abi: $lib: SONAME $soname, $(echo "$exported" | wc -l) functions, all cdm_* under $node, each declared"
fi
exit $status
