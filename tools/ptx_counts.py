#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Instruction counts of the normal kernels, for a source tree, without a GPU.

    tools/ptx_counts.py [TREE] [--arch sm_90]

Compiles TREE's (default: this checkout's) kernels with nvcc the way the
Makefile builds them (-O3 --fmad=false), plus two probes per case:

  transform  kernels::block_values of one Philox block read from memory
             (triton: triton_value): the element transform alone;
  block      one Philox block per thread, computed (in_order_block),
             transformed and stored: the work per block of the in-order
             kernels' loop, without the loop.

and prints the probes' static PTX instructions by kind, their static SASS
instruction count (the size of each kernel's .text section in the cubin,
16 bytes an instruction on sm_70 and later: straight-line code, so static
is executed, give or take the few instructions of the entry, exit and
section padding), and ptxas's registers for the backend's kernels.  No
cuobjdump or nvdisasm is needed (this machine has neither).  docs/cuda.md
records the counts before and after issue 30; a lent GPU's ncu profile
gives the executed mix (tools/gpu_proof.sh ncu).
"""
import struct
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
LAYOUTS = {"stateless": 0, "nvfuser": 1, "torch-eager-cuda": 2, "triton": 3}
DTYPES = {"f16": 3, "bf16": 4, "f32": 5, "f64": 6}
NORMAL, UNIFORM, BITS = 2, 1, 0

# What a probe instantiates: kernels::block_values of one block, or the
# triton layout's one value.
PROBE = r"""
#include "kernel_bodies.h"
using namespace rngtrk;
using namespace rngtrk::kernels;
template <Layout L, Dist D, DType T>
__global__ void block(uint64_t seed, uint64_t base, typename Kind<D, T>::Value *out, SampleSpec s) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    using Out = typename Kind<D, T>::Value;
    constexpr unsigned E = Kind<D, T>::units;
    Out v[E];
    block_values<L, D, T>(s, in_order_block<L>(base, i, k0, k1), v);
    store_bytes<sizeof v>(out + E * i, v);
}
template <Layout L, Dist D, DType T>
__global__ void probe(const PhiloxBlock *w, typename Kind<D, T>::Value *out, SampleSpec s) {
    const unsigned i = threadIdx.x;
    if constexpr (L == Layout::triton) {
        out[i] = triton_value<D, T>(s, w[i]);
    } else {
        typename Kind<D, T>::Value v[Kind<D, T>::units];
        block_values<L, D, T>(s, w[i], v);
        for (unsigned c = 0; c < Kind<D, T>::units; ++c) out[Kind<D, T>::units * i + c] = v[c];
    }
}
%s
"""

# Opcode kinds, in print order: (label, regex on the opcode with its suffixes).
KINDS = [
    ("cvt int<->float", r"^cvt\.(rn|rz|rzi|rni|rmi|rpi)?\.?(f32|f64|f16|bf16)\.[su](32|64)$|^cvt\.(rn|rz|rzi|rni|rmi|rpi)\.?[su](32|64)\.(f32|f64)$|^cvt\.rzi\.[su]\d+\.f\d+$"),
    ("cvt float<->float", r"^cvt\.(rn\.)?(f16|bf16|f32|f64)\.(f16|bf16|f32|f64)$"),
    ("cvt int width", r"^cvt\.[us]\d+\.[us]\d+$"),
    ("f32 add/sub/mul", r"^(add|sub|mul)\.rn\.f32$|^(add|sub|mul)\.f32$|^neg\.f32$|^abs\.f32$"),
    ("f32 fma", r"^fma\.rn\.f32$"),
    ("f64 add/sub/mul", r"^(add|sub|mul)\.rn\.f64$|^(add|sub|mul)\.f64$|^neg\.f64$"),
    ("f64 fma", r"^fma\.rn\.f64$"),
    ("float compare", r"^setp\.[a-z]+\.f(32|64)$"),
    ("int compare", r"^setp\.[a-z]+\.[usb](16|32|64)$"),
    ("select", r"^selp\."),
    ("int mul (32-bit)", r"^mul\.(hi|lo|wide)\.[us]32$|^mad\.(hi|lo|wide)\.[us]32$"),
    ("int mul (64-bit)", r"^mul\.(hi|lo|wide)\.[us]64$|^mad\.(hi|lo|wide)\.[us]64$"),
    ("int add/sub (32)", r"^(add|sub)\.[us]32$|^(add|sub)\.cc|^addc"),
    ("int add/sub (64)", r"^(add|sub)\.[us]64$"),
    ("logic/shift (32)", r"^(and|or|xor|not|shl|shr|lop3)\.b32$|^shr\.[us]32$|^(and|or|xor|not)\.pred$|^shf\.|^prmt\.|^bfe|^bfi"),
    ("logic/shift (64)", r"^(and|or|xor|not|shl|shr)\.b64$|^shr\.[us]64$"),
    ("mov/bit cast", r"^mov\."),
    ("load", r"^ld\."),
    ("store", r"^st\."),
    ("branch", r"^bra|^@"),
]


def kinds_of(body):
    counts = collections.Counter()
    other = collections.Counter()
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith(("//", ".", "{", "}", "$")) or line.endswith(":"):
            continue
        tokens = line.split()
        if tokens[0].startswith("@"):  # predicated: count the instruction
            tokens = tokens[1:]
        op = tokens[0].rstrip(";")
        if op in ("ret", "exit"):
            continue
        for label, pattern in KINDS:
            if re.search(pattern, op):
                counts[label] += 1
                break
        else:
            other[op] += 1
    return counts, other


def entries(ptx):
    """{mangled name: body} of every .entry."""
    found = {}
    for m in re.finditer(r"\.entry\s+(\S+)\(.*?\n\{(.*?)\n\}", ptx, re.S):
        found[m.group(1)] = m.group(2)
    return found


def mangled_args(layout, dist, dtype):
    """A regex for the template arguments <layout, dist, dtype> in a mangled name."""
    return r"6LayoutE%dELNS\w*_4DistE%dELNS\w*_5DTypeE%dE" % (layout, dist, dtype)


def sass_counts(cubin):
    """{section name: instructions} of the .text sections of a cubin (ELF64)."""
    with open(cubin, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx]
    names = data[strtab[4]:strtab[4] + strtab[5]]
    out = {}
    for name_at, _type, _flags, _addr, _offset, size, *_ in sections:
        name = names[name_at:names.index(b"\0", name_at)].decode()
        if name.startswith(".text."):
            out[name[len(".text."):]] = size // 16
    return out


def compile_cubin(tree, arch, source, name, extra=()):
    out = os.path.join(tempfile.mkdtemp(prefix="rngtrk-cubin-"), name + ".cubin")
    cmd = [NVCC, "-std=c++17", "-O3", "--fmad=false", "-arch=" + arch, "-I" + os.path.join(tree, "core"),
           "-I" + os.path.join(tree, "cuda"), "-cubin", source, "-o", out, *extra]
    subprocess.run(cmd, check=True)
    return sass_counts(out)


def compile_ptx(tree, arch, source, name, extra=()):
    out = os.path.join(tempfile.mkdtemp(prefix="rngtrk-ptx-"), name + ".ptx")
    cmd = [NVCC, "-std=c++17", "-O3", "--fmad=false", "-arch=" + arch, "-I" + os.path.join(tree, "core"),
           "-I" + os.path.join(tree, "cuda"), "-ptx", source, "-o", out, *extra]
    subprocess.run(cmd, check=True)
    with open(out) as f:
        return f.read(), out


def ptxas_registers(ptx_path, arch, pattern):
    run = subprocess.run([os.path.join(os.path.dirname(NVCC), "ptxas"), "-arch=" + arch, "-v", "-O3", ptx_path,
                          "-o", os.devnull], capture_output=True, text=True, check=True)
    lines = run.stderr.splitlines()
    result = {}
    for i, line in enumerate(lines):
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m and re.search(pattern, m.group(1)):
            for follow in lines[i + 1:i + 4]:
                r = re.search(r"Used (\d+) registers", follow)
                s = re.search(r"(\d+) bytes spill stores", follow)
                if r:
                    result.setdefault(m.group(1), {})["registers"] = int(r.group(1))
                if s:
                    result.setdefault(m.group(1), {})["spill_stores"] = int(s.group(1))
    return result


def table(title, rows):
    """rows: [(name, Counter)]"""
    labels = [label for label, _ in KINDS] + ["other", "total"]
    print(title)
    print("%-22s" % "kind" + "".join("%16s" % name for name, _ in rows))
    for label in labels:
        values = [c[label] for _, c in rows]
        if any(values):
            print("%-22s" % label + "".join("%16d" % v for v in values))
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=os.path.dirname(HERE))
    parser.add_argument("--arch", default="sm_90")
    opts = parser.parse_args()
    tree = os.path.abspath(opts.tree)

    wanted = [("stateless", "f32"), ("stateless", "f64"), ("stateless", "f16"), ("stateless", "bf16"),
              ("nvfuser", "f32"), ("torch-eager-cuda", "f32"), ("triton", "f32")]
    # Normal f16/bf16 exist from issue 30 on; an older tree lacks them.
    with open(os.path.join(tree, "core", "elements.h")) as f:
        has_half = "normal_16" in f.read()
    wanted = [w for w in wanted if has_half or w[1] not in ("f16", "bf16")]
    cases = [("stateless", "uniform", "f32")] + [(l, "normal", t) for l, t in wanted]

    # The probes.
    enum = {"torch-eager-cuda": "eager_cuda"}
    instances = []
    for layout, dist, dtype in cases:
        args = (enum.get(layout, layout), dist, dtype, dist, dtype)
        instances.append("template __global__ void probe<Layout::%s, Dist::%s, DType::%s>("
                         "const PhiloxBlock *, Kind<Dist::%s, DType::%s>::Value *, SampleSpec);" % args)
        if layout in ("stateless", "nvfuser"):
            instances.append("template __global__ void block<Layout::%s, Dist::%s, DType::%s>("
                             "uint64_t, uint64_t, Kind<Dist::%s, DType::%s>::Value *, SampleSpec);" % args)
    with tempfile.NamedTemporaryFile("w", suffix=".cu", delete=False) as f:
        f.write(PROBE % "\n".join(instances))
        probe_source = f.name
    probe_ptx, probe_path = compile_ptx(tree, opts.arch, probe_source, "probe")
    probe_sass = compile_cubin(tree, opts.arch, probe_source, "probe")
    probe_entries = entries(probe_ptx)
    rows, sass_rows = [], []
    for layout, dist, dtype in cases:
        key = mangled_args(LAYOUTS[layout], {"normal": NORMAL, "uniform": UNIFORM}[dist], DTYPES[dtype])
        label = "%s %s%s" % (layout.replace("torch-eager-cuda", "eager"), "" if dist == "normal" else "uniform ", dtype)
        name, body = next((n, b) for n, b in probe_entries.items() if "5probe" in n and re.search(key, n))
        counts, other = kinds_of(body)
        counts["other"] = sum(other.values())
        counts["total"] = sum(v for k, v in counts.items() if k != "total")
        rows.append((label, counts))
        transform = probe_sass[name]
        whole = next((c for n, c in probe_sass.items() if "5block" in n and re.search(key, n)), None)
        sass_rows.append((label, transform, whole))
    table("PTX of the transform of one Philox block (probe 'transform': block_values / triton_value), %s:"
          % opts.arch, rows)
    print("Static SASS instructions (%s): the transform of one block; one whole block (Philox, transform, store)"
          % opts.arch)
    for label, transform, whole in sass_rows:
        print("  %-18s transform %4d   block %s" % (label, transform, "%4d" % whole if whole else "   -"))
    print()

    # The backend's kernels themselves (static: loop, edge path and prologue included).
    backend = os.path.join(tree, "cuda", "cuda_backend.cu")
    # (the code it names when a GPU runs none: this architecture's, as the Makefile passes it)
    flags = ("-Xcompiler", "-fPIC", "-DRNGTRK_CUDA_SASS=RNGTRK_ARCH(%s)" % opts.arch.split("_")[-1], "-DRNGTRK_CUDA_PTX=")
    backend_ptx, backend_path = compile_ptx(tree, opts.arch, backend, "backend", flags)
    backend_sass = compile_cubin(tree, opts.arch, backend, "backend", flags)
    backend_entries = entries(backend_ptx)
    regs = ptxas_registers(backend_path, opts.arch, "in_order_kernel|eager_kernel")
    print("The backend's kernels (%s): static PTX and SASS instructions, ptxas -v registers" % opts.arch)
    for layout, dist, dtype in cases:
        code = {"normal": NORMAL, "uniform": UNIFORM}[dist]
        if layout == "torch-eager-cuda":  # the 32-bit (narrow) body
            kernel, key = "eager_kernel", r"4DistE%dELNS\w*_5DTypeE%dEjE" % (code, DTYPES[dtype])
        else:
            kernel, key = "in_order_kernel", mangled_args(LAYOUTS[layout], code, DTYPES[dtype])
        name, body = next((n, b) for n, b in backend_entries.items() if kernel in n and re.search(key, n))
        counts, other = kinds_of(body)
        r = regs.get(name, {})
        label = "%s %s%s" % (layout.replace("torch-eager-cuda", "eager"), "" if dist == "normal" else "uniform ", dtype)
        print("  %-18s PTX %4d   SASS %4d   %3s registers, %s bytes spilled" % (
            label, sum(counts.values()) + sum(other.values()), backend_sass.get(name, -1), r.get("registers", "?"),
            r.get("spill_stores", "?")))
    os.unlink(probe_source)


if __name__ == "__main__":
    sys.exit(main())
