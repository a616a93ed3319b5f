#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Copies the C++ sources of librngtrk from the checkout into csrc/ next to
# this script, so that `cargo package` packs them and the packed crate can
# build the library itself (build.rs prefers csrc/ when it is there).
# csrc/ is git-ignored: run this before `cargo package`.  What is copied:
# library.mk (the list of sources and flags build.rs reads), core/ and
# c_api/ sources and headers, the CPU-only stub of the CUDA backend, and
# the licence.
#
#   vendor_sources.sh            (re)make csrc/
#   vendor_sources.sh --remove   remove csrc/ (the crate then builds from the checkout)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
dest="$here/csrc"
rm -rf "$dest"
[ "${1:-}" = "--remove" ] && exit 0
if [ ! -f "$top/library.mk" ] || [ ! -f "$top/c_api/rngtrk.h" ]; then
    echo "vendor_sources.sh: $top is not an rngtrk checkout" >&2
    exit 1
fi
mkdir -p "$dest/core" "$dest/c_api" "$dest/cuda"
cp "$top/library.mk" "$top/LICENSE" "$dest/"
cp "$top"/core/*.cpp "$top"/core/*.h "$top"/core/*.inc "$dest/core/"
cp "$top"/c_api/*.cpp "$top"/c_api/*.h "$dest/c_api/"
# The bundled build is CPU only (library.mk's NO_CUDA_SOURCES).
for source in $(sed -n 's/^NO_CUDA_SOURCES := //p' "$top/library.mk"); do
    cp "$top/$source" "$dest/$source"
done
