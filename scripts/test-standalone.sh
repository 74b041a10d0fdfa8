#!/usr/bin/env bash
# What runs on a machine without the Swift toolchain, run with the toolchain hidden
# (scripts/without-toolchain.sh): the installed `cdmigrate` command, a C host linked through
# cdmigrate-static.pc, the wheel installed into a fresh virtualenv, and the command with a C policy
# library (--policies) whose result must match the Python policy's.
#
#   scripts/test-standalone.sh SWIFT_ROOT PREFIX WHEEL
#
# PREFIX is an install prefix (make install PREFIX=…); WHEEL the manylinux wheel
# (make -C bindings/python wheel). The last line is "N passed, M failed".
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SWIFT_ROOT PREFIX WHEEL" >&2; exit 2; }
cd "$(dirname "$0")/.."
repo=$PWD
swift_root=$1 prefix=$2 wheel=$3
version=$(cat VERSION)
hide() { scripts/without-toolchain.sh "$swift_root" "$@"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cdmigrate-standalone.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
run() {  # run NAME COMMAND...: one check
    local name=$1; shift
    if "$@" >"$work/output" 2>&1; then passed=$((passed + 1)); echo "ok   $name"
    else failed=$((failed + 1)); echo "FAIL $name" >&2; cat "$work/output" >&2; fi
}

# 1. The command: what it needs, its version, a migration of a store written by Core Data across three
# inferred steps, and check over every released version.
stores=$repo/Tests/Fixtures/apple-stores/renames
run "cdmigrate needs only the C library and the documented libraries" \
    scripts/check-needed.sh "$swift_root" "$prefix/bin/cdmigrate" "$prefix/lib/libcdmigrate.so.$version"
run "cdmigrate --version without the toolchain" \
    sh -c "[ \"\$('$repo/scripts/without-toolchain.sh' '$swift_root' '$prefix/bin/cdmigrate' --version)\" = '$version' ]"
cp "$stores/Example_v1.1.0.sqlite" "$work/"
run "cdmigrate migrate without the toolchain" \
    hide "$prefix/bin/cdmigrate" migrate "$work/Example_v1.1.0.sqlite" --models "$stores/Model.xcdatamodeld" --to "$work/migrated.sqlite"
run "the migrated store is at the current version" \
    sh -c "'$repo/scripts/without-toolchain.sh' '$swift_root' '$prefix/bin/cdmigrate' inspect '$work/migrated.sqlite' --models '$stores/Model.xcdatamodeld' | grep -q 'v2.0.0'"
run "cdmigrate check without the toolchain" \
    hide "$prefix/bin/cdmigrate" check "$stores" --models "$stores/Model.xcdatamodeld"
for shell in bash zsh fish; do
    case $shell in bash) f=share/bash-completion/completions/cdmigrate ;; zsh) f=share/zsh/site-functions/_cdmigrate ;;
                   fish) f=share/fish/vendor_completions.d/cdmigrate.fish ;; esac
    run "the $shell completion script is installed" grep -q migrate "$prefix/$f"
done

run "the man pages are installed, one per command" \
    sh -c "grep -q '^\.SH NAME' '$prefix/share/man/man1/cdmigrate.1' && grep -q -- '--to-version' '$prefix/share/man/man1/cdmigrate-migrate.1'"

# 2. A C host (the UnCloudNotes example: v3 -> v4 with a C policy) linked statically through
# cdmigrate-static.pc, built and run without the toolchain.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
run "cdmigrate-static.pc names nothing in the toolchain" \
    sh -c "! pkg-config --libs cdmigrate-static cdmigrate | grep -qF '${swift_root%/usr}'"
run "a C host builds through cdmigrate-static.pc without the toolchain" \
    hide sh -c "cc -O1 -DEXAMPLES_DIR='\"$repo/examples\"' \$(pkg-config --cflags cdmigrate-static jansson) \
        '$repo/examples/c/uncloudnotes.c' -o '$work/uncloudnotes' \$(pkg-config --libs cdmigrate-static jansson) -lsqlite3 -lm"
run "the static C host needs no Swift library" scripts/check-needed.sh "$swift_root" "$work/uncloudnotes"
run "the static C host migrates without the toolchain" sh -c "cd '$work' && '$repo/scripts/without-toolchain.sh' '$swift_root' ./uncloudnotes >/dev/null"

# 3. The wheel in a fresh virtualenv: the import, the library's version, a migration with a
# Python policy (the UnCloudNotes reference migration, which checks its own result), and the
# console script (--version, migrate --policies MODULE, check), without the toolchain.
python=${PYTHON:-python3}
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-deps "$wheel"
run "the wheel imports without the toolchain" \
    hide "$work/venv/bin/python" -c "import cdmigrate; assert cdmigrate.library_version() == '$version', cdmigrate.library_version()"
run "a migration with a Python policy from the wheel without the toolchain" \
    sh -c "cd '$repo/examples/python' && '$repo/scripts/without-toolchain.sh' '$swift_root' '$work/venv/bin/python' -m reference_migrations --scenario 4 --keep '$work/python'"
# The wheel's console script: its version, a migration with a Python policy module (the
# UnCloudNotes v3 -> v4 step, on the v3 store the reference run kept), and check.
run "the wheel's cdmigrate --version without the toolchain" \
    sh -c "[ \"\$('$repo/scripts/without-toolchain.sh' '$swift_root' '$work/venv/bin/cdmigrate' --version)\" = '$version' ]"
run "the wheel's cdmigrate migrates with a Python policy module without the toolchain" \
    sh -c "cd '$repo/examples/python' && '$repo/scripts/without-toolchain.sh' '$swift_root' '$work/venv/bin/cdmigrate' migrate \
        '$work/python/scenario-4/UnCloudNotes-v3.sqlite' --models '$repo/examples/4-uncloudnotes' \
        --to '$work/console-v4.sqlite' --policies reference_migrations.uncloudnotes"
run "the wheel's cdmigrate check without the toolchain" \
    hide "$work/venv/bin/cdmigrate" check "$stores" --models "$stores/Model.xcdatamodeld"

# 4. The command with a C policy library (--policies: the library calls the C API the command
# exports), on the v3 store the Python run kept: the same attachments as the Python policy made.
cat > "$work/policies.c" <<POLICIES
#define main uncloudnotes_example_main
#include "$repo/examples/c/uncloudnotes.c"
#undef main
int cdm_register_policies(cdm_migration *migration) {
    cdm_policy hooks = {0};
    hooks.create_destination_instances = image_attachment_create;
    return cdm_migration_register_policy(migration, "AttachmentToImageAttachmentMigrationPolicyV3toV4", &hooks, sizeof hooks, NULL, NULL);
}
POLICIES
kept=$work/python/scenario-4
run "a C policy library builds against the installed header" \
    cc -shared -fPIC -I "$prefix/include" -o "$work/libpolicies.so" "$work/policies.c"
run "cdmigrate migrate --policies without the toolchain" \
    hide "$prefix/bin/cdmigrate" migrate "$kept/UnCloudNotes-v3.sqlite" --models "$repo/examples/4-uncloudnotes" \
        --to "$work/policies-v4.sqlite" --policies "$work/libpolicies.so"
attachments() { sqlite3 "$1" "SELECT Z_ENT, ZWIDTH, ZHEIGHT, ZCAPTION FROM ZATTACHMENT WHERE ZCAPTION IS NOT NULL ORDER BY 4, 2, 3"; }
attachments "$kept/UnCloudNotes-v3-to-v4.sqlite" > "$work/python-attachments" 2>&1 || true
attachments "$work/policies-v4.sqlite" > "$work/c-attachments" 2>&1 || true
run "the C policy's image attachments are the Python policy's" \
    sh -c "[ \$(wc -l < '$work/python-attachments') -gt 100 ] && cmp '$work/python-attachments' '$work/c-attachments'"

echo "standalone: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
