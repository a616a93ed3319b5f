#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A new user's first two minutes, in a fresh clone of this repository (with
# this working tree's uncommitted changes carried over): plain `make`
# builds the library, its soname link, the static library, rngtrk.pc, the
# rngtrk command and the device header (and, with nvcc, the CUDA module);
# `make -j2 demo`, first, runs from nothing built and every part of it
# reports OK (CI's own `make clean; make demo` runs it too); then the README's Python
# install commands, as written, give a venv that runs the README's example.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clone="$tmp/rngtrk"
"$top/tests/clone_checkout.sh" "$clone"
cd "$clone"

# A fresh clone has nothing built, as after `make clean`: the demo first
# (it builds what it needs), then plain make the rest; one build in all.
make -j2 demo >"$tmp/demo.log" 2>&1 || { echo "make -j2 demo failed in a fresh clone:"; tail -30 "$tmp/demo.log"; exit 1; }
grep -q "^FAILED" "$tmp/demo.log" && { grep "^FAILED" "$tmp/demo.log"; exit 1; }
oks=$(grep -c "^OK" "$tmp/demo.log")
skips=$(grep -c "^demo: .* skipped" "$tmp/demo.log" || true)
# C, Python, Rust and the two MPI runs each end with an OK line, unless skipped.
[ $((oks + skips)) -ge 4 ] || { echo "make demo printed $oks OK lines and $skips skips:"; cat "$tmp/demo.log"; exit 1; }

make -j2 >"$tmp/make.log" 2>&1 || { echo "make failed in a fresh clone:"; tail -20 "$tmp/make.log"; exit 1; }
for f in build/librngtrk.so.0 build/librngtrk.so build/librngtrk.a build/rngtrk build/rngtrk.pc \
         build/include/rngtrk_device.cuh; do
    [ -e "$f" ] || { echo "plain make in a fresh clone did not build $f"; exit 1; }
done
# With nvcc, the CUDA module beside the library.
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && ! ls build/librngtrk_cuda[0-9]*.so >/dev/null 2>&1; then
    echo "plain make in a fresh clone with nvcc built no CUDA module (build/librngtrk_cudaNN.so)"; exit 1
fi
build/rngtrk version >/dev/null || { echo "build/rngtrk does not run"; exit 1; }

# The README's Python install commands, exactly as written, in the clone;
# then the README's Python example from another folder with that venv.
sed -n '/<!-- readme-python-install:begin -->/,/<!-- readme-python-install:end -->/p' README.md \
    | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >"$tmp/install.sh"
[ -s "$tmp/install.sh" ] || { echo "no readme-python-install block in README.md"; exit 1; }
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 sh -eux "$tmp/install.sh" >"$tmp/install.log" 2>&1 ||
    { echo "the README's Python install commands failed:"; tail -20 "$tmp/install.log"; exit 1; }
sed -n '/<!-- readme-python-example:begin -->/,/<!-- readme-python-example:end -->/p' README.md \
    | sed -n '/^```python$/,/^```$/p' | sed '1d;$d' >"$tmp/example.py"
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && env -u PYTHONPATH -u RNGTRK_LIBRARY "$clone/.venv/bin/python" "$tmp/example.py") \
    >"$tmp/example.log" 2>&1 || { echo "the README's Python example failed in that venv:"; cat "$tmp/example.log"; exit 1; }
grep -q '"model-parallel-rng"' "$tmp/example.log" || { echo "unexpected output:"; cat "$tmp/example.log"; exit 1; }
