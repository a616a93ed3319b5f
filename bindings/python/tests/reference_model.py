# SPDX-License-Identifier: Apache-2.0
"""A tracker in plain Python, written from docs/tracker.md and
docs/checkpoint-format.md (not from the C++ code), for the property tests.

Each operation returns None on success or the exception class the library
must raise; a refused operation changes nothing, as documented."""
import struct
import zlib

import rngtrk

M64 = (1 << 64) - 1


def name_is_valid(name):
    raw = name.encode("utf-8", "surrogatepass")
    return 1 <= len(raw) <= 255 and "\0" not in name and not any(0xD800 <= ord(c) <= 0xDFFF for c in name)


class ModelTracker:
    def __init__(self):
        self.default = (0, 0)
        self.states = {}  # name -> (seed, offset), insertion order
        self.forks = []   # open fork names, innermost last

    def copy_from(self, other):
        self.default, self.states, self.forks = other.default, dict(other.states), list(other.forks)

    def _seed_owner(self, seed, except_name=None):
        return any(s == seed and n != except_name for n, (s, _) in self.states.items())

    def active(self):
        return self.states[self.forks[-1]] if self.forks else self.default

    def add(self, name, seed):
        if not name_is_valid(name):
            return rngtrk.InvalidArgumentError
        if name in self.states:
            return rngtrk.DuplicateNameError
        if self._seed_owner(seed):
            return rngtrk.DuplicateSeedError
        self.states[name] = (seed, 0)

    def fork(self, name):
        if name not in self.states:
            return rngtrk.InvalidArgumentError if not name_is_valid(name) else rngtrk.UnknownNameError
        self.forks.append(name)  # may already be open: the same state, one stream

    def restore(self, name):
        if name not in self.states:
            return rngtrk.InvalidArgumentError if not name_is_valid(name) else rngtrk.UnknownNameError
        if not self.forks or self.forks[-1] != name:
            return rngtrk.ForkOrderError
        self.forks.pop()

    def advance(self, increment):
        seed, offset = self.active()
        new_offset = offset + (increment + 3) // 4 * 4
        if new_offset > M64:
            return rngtrk.RngtrkOverflowError
        if self.forks:
            self.states[self.forks[-1]] = (seed, new_offset)
        else:
            self.default = (seed, new_offset)

    def manual_seed(self, seed):
        self.default = (seed, 0)

    def set_default(self, seed, offset):
        if offset % 4:
            return rngtrk.InvalidArgumentError
        self.default = (seed, offset)

    def set_state(self, name, seed, offset):
        if name not in self.states:
            return rngtrk.InvalidArgumentError if not name_is_valid(name) else rngtrk.UnknownNameError
        if offset % 4:
            return rngtrk.InvalidArgumentError
        if self._seed_owner(seed, except_name=name):
            return rngtrk.DuplicateSeedError
        self.states[name] = (seed, offset)

    def set_states(self, entries):
        """entries: list of (valid name, seed, offset).  Inside forks, every
        open fork's name must stay."""
        names, seeds = set(), set()
        for name, seed, offset in entries:
            if offset % 4:
                return rngtrk.InvalidArgumentError
            if name in names:
                return rngtrk.DuplicateNameError
            if seed in seeds:
                return rngtrk.DuplicateSeedError
            names.add(name)
            seeds.add(seed)
        if any(name not in names for name in self.forks):
            return rngtrk.ForkOrderError
        self.states = {name: (seed, offset) for name, seed, offset in entries}

    def reset(self):
        if self.forks:
            return rngtrk.ForkOrderError
        self.default, self.states = (0, 0), {}

    def checkpoint(self):
        """The bytes of docs/checkpoint-format.md."""
        body = b"".join(struct.pack("<B", len(n.encode())) + n.encode() + struct.pack("<QQ", s, o)
                        for n, (s, o) in self.states.items())
        head = b"RNGTRKCK" + struct.pack("<IQQQI", 1, 40 + len(body) + 4, *self.default, len(self.states))
        data = head + body
        return data + struct.pack("<I", zlib.crc32(data))
