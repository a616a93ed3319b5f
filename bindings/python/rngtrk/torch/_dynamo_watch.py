# SPDX-License-Identifier: Apache-2.0
"""What waits for torch._dynamo.  Importing it costs a second or more, so
rngtrk.torch never imports it itself; the functions that must be hidden
from dynamo (run as they are, outside any graph: torch._dynamo.disable)
are wrapped the moment something else imports it, or at once if it is
already imported."""
from ._install import Installer, ModulePatch

_waiting = []   # callbacks, each called once with the torch._dynamo module
_ready = []     # [the torch._dynamo module] once imported


def _imported(module):
    _ready.append(module)
    for callback in _waiting:
        callback(module)


_watch = Installer([ModulePatch("torch._dynamo", lambda module: {}, after=_imported)])


def when_dynamo_imported(callback):
    """Calls callback(torch._dynamo) once torch._dynamo is imported: now if
    it is, else right after its import."""
    _waiting.append(callback)
    if _ready:
        callback(_ready[0])
    else:
        _watch.install()  # (idempotent: applies at once when the module is already there)
