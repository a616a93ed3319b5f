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
        """The values set_states() keeps that are not states (none: {})."""
        self._kept, self._kept_why = kept, why or {}
        self._kept_order = order if kept else []

    def _names(self):
        """Every name held, kept values' included, in set_states()' order
        and then add()'s."""
        names = self.tracker.names()
        if not self._kept:
            return names
        listed = set(self._kept_order)
        return [n for n in self._kept_order if n in self._kept or n in self.tracker] + \
            [n for n in names if n not in listed]

    def _with_kept(self, real):
        """get_states(): `real` ({name: state}) with the kept values, in
        _names()' order."""
        if not self._kept:
            return real
        return {name: self._kept[name] if name in self._kept else real[name] for name in self._names()}

    def _refuse_kept(self, name, use):
        kind = type(self._kept[name]).__name__
        raise NotAStateError(f"{use} of cuda rng state {name!r}: set_states gave it {_article(kind)} {kind}, "
                             f"kept as given (as upstream keeps any value) but not a state: "
                             f"{self._kept_why.get(name, '')}")
