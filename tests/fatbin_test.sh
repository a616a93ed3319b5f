#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The GPU code the built library carries is what library.mk lists: machine
# code for each of CUDA_ARCHITECTURES and PTX for each of
# CUDA_PTX_ARCHITECTURES (or what CUDA_ARCHS, when set, asked for), in the
# CUDA module (librngtrk_cudaNN.so, NN the major of the nvcc that built it)
# and in the static archive, and none in librngtrk.so (which links no CUDA
# runtime: its loader opens the module); each entry unpacks to a CUDA
# ELF of its own architecture, or to PTX that targets it; and, where nvcc
# compresses, every entry is compressed.  The reader (tools/fatbin_list.py)
# must also see a header that lies about its architecture.
#   tests/fatbin_test.sh BUILD_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "fatbin_test: $*"; exit 1; }
major=$(sed -n 's/^#define RNGTRK_VERSION_MAJOR //p' "$top/c_api/rngtrk.h")
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
cuda_major=$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')
lib="$build/librngtrk_cuda$cuda_major.so"
[ -f "$lib" ] || fail "no CUDA module $lib (nvcc $cuda_major)"
exports=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u | tr '\n' ' ')
[ "$exports" = "rngtrk_cuda_module_v1 " ] || fail "$lib exports '$exports', not rngtrk_cuda_module_v1 alone"
[ -f "$build/librngtrk.so.$major" ] || fail "no $build/librngtrk.so.$major"
if readelf -S "$build/librngtrk.so.$major" | grep -q nv_fatbin; then
    fail "$build/librngtrk.so.$major carries GPU code: the kernels belong in the module"
fi

list() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$top/library.mk" | sed -n "s/^$1 := //p" | tr -s ' ' '\n' | sed '/^$/d'; }
if [ -n "${CUDA_ARCHS:-}" ]; then
    printf '%s\n' $CUDA_ARCHS | sed -n 's/.*code=\[*\(.*\)\]*$/\1/p' | tr ',' '\n' | tr -d ']' |
        sed -e 's/^sm_/sass sm_/' -e 's/^compute_/ptx compute_/' | sort -u >"$work/expected"
else
    { list CUDA_ARCHITECTURES | sed 's/^/sass sm_/'; list CUDA_PTX_ARCHITECTURES | sed 's/^/ptx compute_/'; } |
        sort >"$work/expected"
fi

entries() {  # FILE: its "kind arch" lines, sorted; the whole listing in $work/listing
    "$top/tools/fatbin_list.py" --verify "$1" >"$work/listing" || fail "$1: the fat binary does not check out"
    awk '{print $1, $2}' "$work/listing" | sort
}
entries "$lib" >"$work/shared"
diff -u "$work/expected" "$work/shared" >"$work/diff" || { cat "$work/diff"; fail "$lib: not library.mk's list (- expected, + found)"; }
if "$nvcc" --help 2>/dev/null | grep -q -e '--compress-mode'; then
    if grep -v ' zstd ' "$work/listing"; then fail "$lib: the entries above are not compressed"; fi
fi
sed 's/^/  /' "$work/listing"

(cd "$work" && ar x "$build/librngtrk.a" cuda_backend.o) || fail "$build/librngtrk.a has no cuda_backend.o"
entries "$work/cuda_backend.o" >"$work/static"
cmp -s "$work/shared" "$work/static" || fail "librngtrk.a's cuda_backend.o carries other code than $lib"

# A copy whose first entry's header names another architecture: the reader
# must say so (the check above would otherwise prove nothing).
python3 - "$lib" "$work/lying.so" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
at = data.index(struct.pack("<I", 0xBA55ED50))
header = struct.unpack_from("<H", data, at + 6)[0]
arch = struct.unpack_from("<I", data, at + header + 28)[0]
struct.pack_into("<I", data, at + header + 28, arch + 6)
open(sys.argv[2], "wb").write(data)
EOF
if "$top/tools/fatbin_list.py" --verify "$work/lying.so" >/dev/null 2>"$work/err"; then
    fail "a header naming the wrong architecture was not seen"
fi
grep -q 'its ELF is for sm_' "$work/err" || { cat "$work/err"; fail "the wrong architecture was seen for another reason"; }
echo "fatbin_test: $(wc -l <"$work/expected") entries as library.mk lists, in $(basename "$lib") and librngtrk.a, none in librngtrk.so"
