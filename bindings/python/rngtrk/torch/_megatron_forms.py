# SPDX-License-Identifier: Apache-2.0
"""The forms of Megatron-LM's RNG functions that install() follows, read from
the installed Megatron's own signatures (not from a version table, which
goes stale).

rngtrk.torch.megatron's names follow Megatron-LM main (d98e8a64).  Other
lines of Megatron-LM call the same functions differently; what install()
puts into megatron.core.tensor_parallel.random must take their callers'
arguments and return what their callers unpack:

* model_parallel_cuda_manual_seed: the positional order.  In main the 8th
  parameter is gtp_remat_rank; in dev (d48bd6b) and core_r0.19.0 it is
  force_reset_rng.  The installed function takes the installed Megatron's
  parameters, in its order, and passes those given to ours by name (an
  argument left out takes ours's default, which is main's).
* _get_all_rng_states / _set_all_rng_states: in dev, a snapshot is four
  values (cpu, cuda, tracker, kind) and the restore takes kind= ("cloned":
  a graph-safe tracker's copies, taken outside a CUDA graph capture;
  "live": handles, or a tracker that is not graph-safe), refusing a cloned
  snapshot under a tracker that is not graph-safe, inside a capture, or
  with other names.  Read from _set_all_rng_states' own parameters (a
  `kind` parameter: the four-value form).

A form this module does not know (a parameter name rngtrk does not have)
raises MegatronFormError naming the function and the signature found, and
install() then installs nothing.  Megatron's own checkpoint functions and
classes (CheckpointWithoutOutput, its manager, whatever their names and
parameters in the installed Megatron) stay Megatron's under install(); they
reach rngtrk's states through the functions above.
"""
import functools
import inspect

from ..errors import UnavailableError
from ._generators import capturing

CLONED, LIVE = "cloned", "live"


class MegatronFormError(UnavailableError, TypeError):
    """The installed Megatron-LM has a form of an RNG function that
    install() does not know: rngtrk's UnavailableError, and the TypeError
    of a call it could not take."""


def _signature(function):
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def follow(module, megatron):
    """{name: function} for the installed Megatron's random `module`: ours
    (rngtrk.torch.megatron, `megatron`), in the forms its functions have.
    Names the module does not have are left out."""
    functions = {}
    theirs = module.__dict__.get("model_parallel_cuda_manual_seed")
    if theirs is not None:
        functions["model_parallel_cuda_manual_seed"] = _by_their_parameters(
            theirs, megatron.model_parallel_cuda_manual_seed, "model_parallel_cuda_manual_seed")
    restore = module.__dict__.get("_set_all_rng_states")
    if restore is not None:
        signature = _signature(restore)
        parameters = list(signature.parameters) if signature is not None else None
        if parameters == ["cpu_rng_state", "cuda_rng_state", "cuda_rng_state_tracker", "kind"]:
            functions.update(_tagged(megatron))
        elif parameters != ["cpu_rng_state", "cuda_rng_state", "cuda_rng_state_tracker"]:
            raise MegatronFormError(f"install(): Megatron-LM's _set_all_rng_states{signature} is a form rngtrk does "
                                    "not know (it knows (cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker) and "
                                    "that with kind='live'); nothing was installed")
    return functions


def _by_their_parameters(theirs, ours, name):
    """`ours` taking `theirs`' parameters in its order, passed on by name.
    `ours` itself where the order agrees."""
    their_signature, our_signature = _signature(theirs), _signature(ours)
    if their_signature is None:
        raise MegatronFormError(f"install(): Megatron-LM's {name} has no signature to read; nothing was installed")
    unknown = [p for p in their_signature.parameters if p not in our_signature.parameters]
    if unknown or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in their_signature.parameters.values()):
        raise MegatronFormError(f"install(): Megatron-LM's {name}{their_signature} has parameters rngtrk's does not "
                                f"take ({', '.join(unknown) or '*args/**kwargs'}); rngtrk's is {name}{our_signature}; "
                                "nothing was installed")
    ours_first = [p for p in our_signature.parameters.values() if p.kind == p.POSITIONAL_OR_KEYWORD]
    if [p.name for p in ours_first[:len(their_signature.parameters)]] == list(their_signature.parameters):
        return ours

    @functools.wraps(ours)
    def in_their_form(*args, **kwargs):
        bound = their_signature.bind(*args, **kwargs)  # Megatron's own TypeError for a call it would refuse
        return ours(**bound.arguments)

    in_their_form.__signature__ = their_signature
    in_their_form.__wrapped__ = ours
    return in_their_form


def _tagged(megatron):
    """dev's four-value snapshot and its kind= restore, over ours."""

    def _get_all_rng_states():
        """(cpu, cuda, tracker, kind): rngtrk.torch.megatron._get_all_rng_states
        and the tag of what it took (module text)."""
        states = megatron._get_all_rng_states()
        graph_safe = megatron.is_graph_safe_cuda_rng_tracker(megatron.get_cuda_rng_tracker())
        return (*states, CLONED if graph_safe and not capturing() else LIVE)

    def _set_all_rng_states(cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker, kind=LIVE):
        """Puts back a snapshot of _get_all_rng_states by its kind (module
        text); refuses, changing nothing, what dev refuses."""
        if kind == CLONED:
            tracker = megatron.get_cuda_rng_tracker()
            if not megatron.is_graph_safe_cuda_rng_tracker(tracker):
                raise RuntimeError("a graph-safe RNG snapshot (kind='cloned') is restored under a tracker that is "
                                   "not graph-safe")
            if capturing():
                raise RuntimeError("an eager graph-safe RNG snapshot (kind='cloned') is restored inside a CUDA graph "
                                   "capture: snapshot and restore must sit on the same side of the capture")
            names = set(tracker.states_) if hasattr(tracker, "states_") else set(tracker.get_states())
            if names != set(cuda_rng_state_tracker):
                raise RuntimeError(f"the tracker's names changed since the snapshot: snapshot "
                                   f"{sorted(cuda_rng_state_tracker)}, now {sorted(names)}")
        megatron._set_all_rng_states(cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker)

    return {"_get_all_rng_states": _get_all_rng_states, "_set_all_rng_states": _set_all_rng_states}
