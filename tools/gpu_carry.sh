#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fills .device/ (ignored by git) with what tools/gpu_proof.sh takes from
# there on a GPU machine that has no package access: GoogleTest's headers and
# static libraries (Debian's libgtest-dev, x86-64), and cffi for that
# machine's Python 3.12 when ../shared/device-python312 is beside this
# checkout.  Then carry `.device` to the machine and run, for instance,
#   tools/gpu_proof.sh build/gpu-proof short
#   tools/gpu_carry.sh
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh gtest
mkdir -p .device/gtest/lib
rm -rf .device/gtest/include && mkdir -p .device/gtest/include
cp -r /usr/include/gtest .device/gtest/include/
for lib in libgtest.a libgtest_main.a; do
    found=$(find /usr/lib -name "$lib" | head -1)
    [ -n "$found" ] || { echo "gpu_carry: no $lib (libgtest-dev)" >&2; exit 1; }
    cp "$found" .device/gtest/lib/
done
if [ -d ../shared/device-python312/site ]; then
    rm -rf .device/site && cp -r ../shared/device-python312/site .device/site
fi
du -sh .device | sed 's/^/gpu_carry: /'
