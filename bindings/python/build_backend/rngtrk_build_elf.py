# SPDX-License-Identifier: Apache-2.0
"""The wheel's platform tag from its library, for the build backend
(rngtrk_build.py): a small ELF reader of a shared object's DT_NEEDED
entries and .gnu.version_r symbol versions (read_elf_needs), and the
manylinux tag they allow (platform_tag, tag_from_needs):
manylinux_2_N_ARCH, N the highest GLIBC_2.N symbol version it needs
(GLIBC_ABI_DT_RELR counts as 2.36), when it needs no library but glibc's
and no other glibc version; else linux_ARCH, with a note on stderr.  A file
without .dynamic is refused.

`python3 rngtrk_build.py tag|needs LIBRARY` prints these (see
rngtrk_build.py's end).
"""
import platform
import re
import struct
import sys

from rngtrk_build_errors import BuildError

# What the platform tag needs of a shared object: the libraries it names in
# DT_NEEDED (.dynamic) and the symbol versions it needs of each
# (.gnu.version_r).  Both are reached through the section headers, which
# strip keeps.

_SHT_DYNAMIC, _SHT_GNU_VERNEED, _DT_NEEDED = 6, 0x6FFFFFFE, 1
_ELF_MACHINES = {62: "x86_64", 183: "aarch64", 3: "i686", 22: "s390x", 243: "riscv64", 40: "armv7l"}


def _machine_name(machine, little_endian):
    """The platform tag's architecture for ELF e_machine `machine`: PPC64 (21)
    is ppc64le or ppc64 by the file's byte order (EI_DATA)."""
    if machine == 21:
        return "ppc64le" if little_endian else "ppc64"
    return _ELF_MACHINES.get(machine, platform.machine())


def read_elf_needs(path):
    """{"machine": "x86_64", "needed": [soname, ...], "versions": {soname: [version, ...]}}
    of a shared object, from its .dynamic and .gnu.version_r sections."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise BuildError(f"rngtrk: {path} is not an ELF file")
    is64, order = data[4] == 2, "<" if data[5] == 1 else ">"
    machine = struct.unpack_from(order + "H", data, 18)[0]
    if is64:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        section_format, dyn_format = order + "IIQQQQIIQQ", order + "qQ"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        section_format, dyn_format = order + "IIIIIIIIII", order + "iI"
    # (type, offset, size, link, info) of every section
    sections = []
    for i in range(shnum):
        fields = struct.unpack_from(section_format, data, shoff + i * shentsize)
        sections.append((fields[1], fields[4], fields[5], fields[6], fields[7]))

    def string(table, at):
        start = sections[table][1] + at
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    if not any(kind == _SHT_DYNAMIC for kind, *_ in sections):
        raise BuildError(f"rngtrk: {path} has no .dynamic section: not a shared library (an object file, "
                         "or a statically linked program?); bundle a librngtrk.so built with -shared")
    needed, versions = [], {}
    for kind, offset, size, link, info in sections:
        if kind == _SHT_DYNAMIC:
            step = struct.calcsize(dyn_format)
            for at in range(offset, offset + size, step):
                tag, value = struct.unpack_from(dyn_format, data, at)
                if tag == 0:
                    break
                if tag == _DT_NEEDED:
                    needed.append(string(link, value))
        elif kind == _SHT_GNU_VERNEED:
            at = offset
            for _ in range(info):  # sh_info: the number of Verneed entries
                _, count, file_name, aux, next_need = struct.unpack_from(order + "HHIII", data, at)
                names = versions.setdefault(string(link, file_name), [])
                aux_at = at + aux
                for _ in range(count):
                    _, _, _, name, next_aux = struct.unpack_from(order + "IHHII", data, aux_at)
                    names.append(string(link, name))
                    aux_at += next_aux
                at += next_need
    return {"machine": _machine_name(machine, order == "<"), "needed": needed, "versions": versions}


# The libraries a manylinux wheel may need of the system (PEP 600: those of
# manylinux2014's PEP 599 list that a C++ library can use), and the
# architecture's dynamic loader, which is part of glibc.
MANYLINUX_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                       "libgcc_s.so.1", "libstdc++.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
# libstdc++ and libgcc_s have symbol versions of their own (GLIBCXX_, CXXABI_,
# GCC_) whose manylinux limits this reader does not know: a library that
# needs them gets no manylinux tag.  The backend's own builds link both in.
_UNCHECKED_LIBRARIES = {"libstdc++.so.6", "libgcc_s.so.1"}
# The oldest glibc a manylinux tag of ours names: manylinux2014's.
_MANYLINUX_FLOOR = 17


# glibc's symbol versions not of the GLIBC_2.N form that a tag can name: the
# glibc release that introduced each.  Any other (GLIBC_PRIVATE, a future
# marker) makes the tag linux_ARCH.
_GLIBC_MARKERS = {"GLIBC_ABI_DT_RELR": (2, 36)}


def _version_key(name):
    return tuple(int(p) for p in name.split("_", 1)[1].split("."))


def platform_tag(path, note=True):
    """(tag, why) for the shared object at `path` (see tag_from_needs)."""
    return tag_from_needs(read_elf_needs(path), path, note)


def tag_from_needs(needs, path, note=True):
    """(tag, why) for a library of read_elf_needs' `needs`: manylinux_2_N_ARCH,
    N the highest glibc it needs (GLIBC_2.N, GLIBC_ABI_DT_RELR: 2.36; at
    least 17), when every library it needs is in MANYLINUX_LIBRARIES, none
    is libstdc++/libgcc_s and every version it needs of them is one of
    those; otherwise linux_ARCH, and the reason goes to stderr."""
    arch = needs["machine"]
    glibc, problems = [], []
    problems += [f"needs {lib}, which manylinux does not promise" for lib in needs["needed"]
                 if lib not in MANYLINUX_LIBRARIES]
    problems += [f"needs {lib} (versions {', '.join(needs['versions'].get(lib, [])) or 'none'}), whose "
                 "symbol versions this backend does not check against manylinux: link it statically "
                 "(-static-libstdc++ -static-libgcc)" for lib in needs["needed"] if lib in _UNCHECKED_LIBRARIES]
    for lib, names in needs["versions"].items():
        if lib not in MANYLINUX_LIBRARIES or lib in _UNCHECKED_LIBRARIES:
            continue  # a problem above already
        for name in names:
            if re.fullmatch(r"GLIBC_2(\.[0-9]+)+", name):
                glibc.append((_version_key(name), name))
            elif name in _GLIBC_MARKERS:
                glibc.append((_GLIBC_MARKERS[name], name))
            else:
                problems.append(f"needs {name} of {lib}, a version no manylinux glibc release names")
    if problems:
        why = f"rngtrk: {path}: tagged linux_{arch}, not manylinux: " + "; ".join(problems)
        if note:
            print(why, file=sys.stderr)
        return f"linux_{arch}", why
    minor = max([key[1] for key, _ in glibc] + [_MANYLINUX_FLOOR])
    highest = max(glibc)[1] if glibc else "no GLIBC_ version"
    return f"manylinux_2_{minor}_{arch}", f"needs {', '.join(needs['needed'])}; highest {highest}"
