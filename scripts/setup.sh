#!/usr/bin/env bash
# Installs the system packages cdmigrate builds against (Debian/Ubuntu), when they are missing.
set -euo pipefail
need=()
for pkg in libsqlite3-dev libjansson-dev libxml2-dev zlib1g-dev pkg-config sqlite3 make gcc g++; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain (swift.org, 5.9 or later) must be on PATH" >&2; exit 1; }
