# SPDX-License-Identifier: Apache-2.0
"""The values a drop-in tracker's set_states() keeps that are not states.

Megatron-LM, TransformerEngine and slapo store whatever set_states() is
given (Megatron-LM's own test_cuda_rng_states_tracker sets the int 1234 and
reads it back).  rngtrk's trackers hold states in an rngtrk.Tracker, which
takes states alone; the other values are kept here, beside it, as given, in
set_states()' order, and get_states() and `states_` return them in their
place.  Only their use fails, with NotAStateError naming the stream: a fork
of one, or a save while one is held (rngtrk.torch._tracker calls
_refuse_kept there).  set_states, reset, load_state_dict and seed_rank
replace them.
"""
from ..errors import InvalidArgumentError


class NotAStateError(InvalidArgumentError, TypeError):
    """A value set_states() kept that is not a state (Megatron-LM, TE and
    slapo store any value), used where a state is needed: a fork or a
    save.  rngtrk's InvalidArgumentError, and the TypeError torch raises for
    a generator state of the wrong kind."""


def _article(word):
    return "an" if word[:1].lower() in "aeiou" else "a"


class KeptValues:
    """The kept values' part of RngtrkStatesTracker (module text); it reads
    `self.tracker` (the rngtrk.Tracker of the states)."""

    def _keep(self, kept, why=None, order=None):
        """The values set_states() keeps that are not states (none: {}),
        why each is not one, and set_states()' order of names; replaced as
        one (a reader sees the old set or the new one)."""
        self._kept_all = (kept, why or {}, order if kept else [])

    @property
    def _kept(self):
        return self._kept_all[0]

    def _names(self):
        """Every name held, kept values' included, in set_states()' order
        and then add()'s."""
        return list(self._ordered(self.tracker.names()))

    def _ordered(self, names):
        """`names` (the states', in the rngtrk tracker's order) and the kept
        values' names, in set_states()' order and then add()'s."""
        kept, _, order = self._kept_all
        if not kept:
            return names
        real = set(names)
        listed = set(order)
        return [n for n in order if n in kept or n in real] + [n for n in names if n not in listed]

    def _with_kept(self, real):
        """get_states(): `real` ({name: state}) with the kept values, in
        _ordered()'s order (one snapshot of each)."""
        kept = self._kept_all[0]
        if not kept:
            return real
        return {name: kept[name] if name in kept else real[name] for name in self._ordered(list(real))}

    def _refuse_kept(self, name, use):
        kept, why, _ = self._kept_all
        kind = type(kept[name]).__name__
        raise NotAStateError(f"{use} of cuda rng state {name!r}: set_states gave it {_article(kind)} {kind}, "
                             f"kept as given (as upstream keeps any value) but not a state: {why.get(name, '')}")
