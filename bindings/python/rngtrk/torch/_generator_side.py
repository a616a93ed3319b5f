# SPDX-License-Identifier: Apache-2.0
"""Where a drop-in tracker meets the generator it swaps: a fork entered and
left on torch's CUDA generator (or, graph-safe, on one generator per name,
or on CPU-only torch on the rngtrk tracker's active state), the progress
the generator made stored back into the named state, and the state
rngtrk.torch's ops draw from and move.  rngtrk.torch._tracker says what
"the generator" is in each mode; this is the part of RngtrkStatesTracker
that reads and writes it.
"""
from ..errors import ForkOrderError, UnavailableError, UnknownNameError
from ..state import PhiloxState
from ._generators import (
    advance_generator, capturing, default_generator, new_generator, read_generator, state_of, write_generator,
)


class GeneratorSide:
    """The generator's part of RngtrkStatesTracker (module text).  It reads
    the tracker's `tracker`, `_cuda`, `_graph_safe`, `_generators` and the
    open forks (`_open`, `_outside`, `_c_forks`, `_fork_of`)."""

    def _not_added(self, name, error):
        """The error fork() raises on entry for a name not added (a drop-in
        whose upstream words it otherwise overrides this)."""
        return UnknownNameError(f"cuda rng state {name} is not added ({error.message})", error.code)

    def _enter(self, name):
        if name in self._kept:
            self._refuse_kept(name, "fork")
        c_fork = self._fork_of.get(name)
        if c_fork is None:
            c_fork = self._fork_of[name] = self.tracker.fork(name)
        try:
            c_fork.__enter__()
        except UnknownNameError as e:
            raise self._not_added(name, e) from None
        try:
            if self._graph_safe:
                generator = default_generator()
                outside = generator.graphsafe_get_state()  # a reference: it resumes where it will be
                generator.graphsafe_set_state(self._generators[name])
            elif self._cuda:
                generator = default_generator()
                outside = read_generator(generator)
                if self._open:  # the active name's progress, before another fork takes the generator
                    self.tracker.set_state(self._open[-1], outside)
                write_generator(generator, self.tracker.get_state(name))
            else:
                outside = None
        except BaseException:
            c_fork.__exit__(None, None, None)
            raise
        self._open.append(name)
        self._outside.append(outside)
        self._c_forks.append(c_fork)

    def _leave(self, name):
        if not self._open or self._open[-1] != name:
            raise ForkOrderError(f"leaving fork {name!r} but the innermost open fork is "
                                 f"{self._current_state_name!r}")
        self._open.pop()
        outside, c_fork = self._outside.pop(), self._c_forks.pop()
        try:
            if self._graph_safe:
                default_generator().graphsafe_set_state(outside)
            elif self._cuda:
                generator = default_generator()
                self.tracker.set_state(name, read_generator(generator))
                # The outer name resumes from its stored state (a nested fork
                # of it may have moved it); outside every fork, the default.
                write_generator(generator, self.tracker.get_state(self._open[-1]) if self._open else outside)
        finally:
            c_fork.__exit__(None, None, None)

    def _sync_open(self):
        """CUDA, not graph-safe: the innermost open fork's progress lives in
        torch's generator; store it into the named state."""
        if self._open and self._cuda and not self._graph_safe:
            self.tracker.set_state(self._open[-1], read_generator(default_generator()))

    def _sync_for_save(self):
        """Every state as it is now, in the rngtrk tracker: the generators'
        progress, and the CUDA generator outside every fork as the default."""
        if not self._cuda:
            return
        if self._graph_safe:
            for name, generator in self._generators.items():
                self.tracker.set_state(name, read_generator(generator))
        else:
            self._sync_open()
        if not self._open:
            outside = read_generator(default_generator())
        elif self._graph_safe:
            outside = read_generator(self._outside[0])
        else:
            outside = self._outside[0]
        self.tracker.set_default(outside)

    def _refresh_generators(self):
        """Graph-safe: the generators take the rngtrk tracker's states (by
        value, into the existing objects where a name stays)."""
        if not self._graph_safe:
            return
        generators = {}
        for name, raw in self.tracker.get_states().items():
            state = PhiloxState.from_bytes(raw)
            generator = self._generators.get(name)
            if generator is None:
                generator = new_generator(state)
            else:
                write_generator(generator, state)
            generators[name] = generator
        self._generators = generators

    # -- what rngtrk.torch's ops draw from ------------------------------------------

    def peek(self):
        """The state the next draw starts from: the generator's (module text)."""
        if self._cuda:
            if capturing():
                raise UnavailableError("rngtrk.torch's random ops read torch's generator on the host, which a "
                                       "CUDA graph capture forbids (or would bake one offset into every "
                                       "replay): inside a captured fork use torch's own ops, or "
                                       "rngtrk.cuda_sample_graphsafe")
            return read_generator(default_generator())
        return self.tracker.active_state()

    def consume(self, increment):
        """Moves the generator past `increment` outputs (rounded up to 4)."""
        if self._cuda:
            generator = default_generator()
            advance_generator(generator, read_generator(generator), increment)
        else:
            self.tracker.advance(increment)

    # -- the generator outside the tracker (Megatron's _get/_set_cuda_rng_state) ----

    def generator_state(self):
        """The generator's state now (the CUDA generator's, or on CPU-only
        torch the rngtrk tracker's active state)."""
        return self.peek()

    def set_generator_state(self, state):
        """Sets the generator (on CPU-only torch: the rngtrk tracker's active
        state) to `state`."""
        state = state_of(state)
        if self._cuda:
            write_generator(default_generator(), state)
        elif self._open:
            self.tracker.set_state(self._open[-1], state)
        else:
            self.tracker.set_default(state)
