#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What GPU code a library carries: the entries of the CUDA fat binary in
an ELF file's .nv_fatbin section, read without NVIDIA's cuobjdump (which a
machine without the full toolkit lacks).

    tools/fatbin_list.py build/librngtrk.so.0       one line per entry:
        sass sm_80   zstd 125384 -> 1465320 bytes
        ptx  compute_120 ...
    tools/fatbin_list.py --verify FILE             also unpacks each entry
        (zstd entries through the zstd command) and checks that each
        machine-code entry is a CUDA ELF for the architecture its header
        names and each PTX entry targets its own; exit 1 if not.

The container, as nvcc 12 and 13 write it (little-endian): a 16-byte header
(magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries),
then entries, each a header (u16 kind: 1 PTX, 2 ELF; u16 version; u32 header
size; u64 payload size, padded; u32 at 16: the payload's own size when
compressed; ...; u32 at 28: the architecture as 10*major+minor;
u64 flags at 40; u64 at 56: the unpacked size when compressed) followed by
its payload.  Flag 0x8000 marks a zstd payload (nvcc --compress-mode),
0x2000 an LZ4 block (nvcc 12's: its PTX by default, every entry with
-Xfatbin -compress-all).  The layout is NVIDIA's and undocumented: what is
read here was checked against nvcc 13.0's output for every architecture it
lists and nvcc 12.4's for sm_80, sm_90 and compute_90 (tests/fatbin_test.sh
checks it again on every build, make cuda12 on its module).
"""
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
FLAG_ZSTD, FLAG_LZ4 = 0x8000, 0x2000
EM_CUDA = 190


class FatbinError(Exception):
    pass


def elf_section(data, wanted):
    """The bytes of section `wanted` of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise FatbinError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, offset, size

    _, names_at, _ = header(shstrndx)
    for i in range(shnum):
        name, offset, size = header(i)
        end = data.index(b"\0", names_at + name)
        if data[names_at + name:end].decode() == wanted:
            return data[offset:offset + size]
    return None


def entries(fatbin):
    """(kind, arch, flags, payload, unpacked size) of every entry, in order
    (a section may hold several containers, one per object linked in)."""
    pos = 0
    while pos + 16 <= len(fatbin):
        magic, _version, header_size, size = struct.unpack_from("<IHHQ", fatbin, pos)
        if magic != FATBIN_MAGIC:
            if not any(fatbin[pos:]):  # alignment padding between containers
                return
            raise FatbinError(f"no fat binary header at byte {pos} (magic {magic:#x})")
        at, end = pos + header_size, pos + header_size + size
        while at < end:
            kind, _v, entry_header, payload = struct.unpack_from("<HHIQ", fatbin, at)
            arch, = struct.unpack_from("<I", fatbin, at + 28)
            packed, = struct.unpack_from("<I", fatbin, at + 16)
            flags, = struct.unpack_from("<Q", fatbin, at + 40)
            unpacked, = struct.unpack_from("<Q", fatbin, at + 56)
            # A compressed payload is padded to 8 bytes: its own size is `packed`.
            body = fatbin[at + entry_header:at + entry_header + (packed if flags & (FLAG_ZSTD | FLAG_LZ4) else payload)]
            yield kind, arch, flags, body, unpacked
            at += entry_header + payload
        pos = end


def unpack(flags, body):
    if flags & FLAG_ZSTD:
        return subprocess.run(["zstd", "-d", "-c"], input=body, capture_output=True, check=True).stdout
    if flags & FLAG_LZ4:
        return lz4_block(body)
    return body


def lz4_block(data):
    """An LZ4 block (the format of LZ4_compress_default: no frame), as the
    fat binaries of nvcc 12.x compress by default; unpacked here, since
    Debian's python3 has no lz4 module and the lz4 command reads frames."""
    try:
        return _lz4_block(data)
    except IndexError:
        raise FatbinError("LZ4: the block ends inside a sequence") from None


def _lz4_length(data, i, n):
    """A length of n (a token's nibble) at byte i: 15 continues in the bytes
    that follow, each added, until one is not 255.  (length, next byte)."""
    if n == 15:
        while True:
            more = data[i]
            i += 1
            n += more
            if more != 255:
                break
    return n, i


def _lz4_block(data):
    out, i = bytearray(), 0
    while i < len(data):
        token = data[i]
        n, i = _lz4_length(data, i + 1, token >> 4)
        out += data[i:i + n]
        i += n
        if i >= len(data):  # the last sequence is literals alone
            break
        offset = data[i] | data[i + 1] << 8
        if offset == 0 or offset > len(out):
            raise FatbinError(f"LZ4: a match {offset} bytes back, with {len(out)} unpacked")
        n, i = _lz4_length(data, i + 2, token & 15)
        start = len(out) - offset
        for k in range(n + 4):  # byte by byte: a match may overlap what it writes
            out.append(out[start + k])
    return bytes(out)


def check_entry(kind, arch, flags, body, unpacked):
    """What is wrong with one entry, or None."""
    code = unpack(flags, body)
    if flags & (FLAG_ZSTD | FLAG_LZ4) and len(code) != unpacked:
        return f"{kind}/{arch}: unpacks to {len(code)} bytes, its header says {unpacked}"
    if kind == KIND_ELF:
        if code[:4] != b"\x7fELF" or struct.unpack_from("<H", code, 18)[0] != EM_CUDA:
            return f"sm_{arch}: not a CUDA ELF"
        # e_flags names the architecture in bits 0-7 up to ELF ABI version 7
        # (CUDA 12's cubins), in bits 8-15 from version 8 (CUDA 13's).
        e_flags = struct.unpack_from("<I", code, 48)[0]
        elf_arch = e_flags & 0xFF if code[8] < 8 else (e_flags >> 8) & 0xFF
        return None if elf_arch == arch else f"sm_{arch}: its ELF is for sm_{elf_arch}"
    target = f".target sm_{arch}".encode()
    return None if target in code else f"compute_{arch}: its PTX has no '{target.decode()}'"


def listing(path, verify=False):
    with open(path, "rb") as f:
        section = elf_section(f.read(), ".nv_fatbin")
    if section is None:
        return [], []
    lines, problems = [], []
    for kind, arch, flags, body, unpacked in entries(section):
        if kind not in (KIND_PTX, KIND_ELF):
            problems.append(f"entry of unknown kind {kind}")
            continue
        name = f"sass sm_{arch}" if kind == KIND_ELF else f"ptx compute_{arch}"
        packing = "zstd" if flags & FLAG_ZSTD else "lz4" if flags & FLAG_LZ4 else "plain"
        sizes = f"{len(body)} -> {unpacked}" if packing != "plain" else f"{len(body)}"
        lines.append(f"{name:<18} {packing} {sizes} bytes")
        if verify:
            problem = check_entry(kind, arch, flags, body, unpacked)
            if problem:
                problems.append(problem)
    return lines, problems


def main(argv):
    verify = "--verify" in argv
    paths = [a for a in argv if a != "--verify"]
    if len(paths) != 1:
        print("usage: fatbin_list.py [--verify] FILE", file=sys.stderr)
        return 2
    try:
        lines, problems = listing(paths[0], verify)
    except (OSError, FatbinError, subprocess.CalledProcessError, struct.error) as e:
        print(f"fatbin_list: {paths[0]}: {e}", file=sys.stderr)
        return 1
    if not lines:
        print(f"fatbin_list: {paths[0]}: no CUDA fat binary (.nv_fatbin)", file=sys.stderr)
        return 1
    print("\n".join(lines))
    for p in problems:
        print(f"fatbin_list: {paths[0]}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
