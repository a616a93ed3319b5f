# SPDX-License-Identifier: Apache-2.0
"""Installing a drop-in into another framework's modules, reversibly.

Python code binds names at import time (`from .random import
get_cuda_rng_tracker`), so rebinding one module attribute later reaches
almost nothing.  A drop-in is installed where every binding looks at call
time: the module globals the framework's own functions read (the tracker
object its getters return, the class its factories construct), and the
attributes later imports copy.  An Installer does that for a list of
ModulePatch: now for modules already imported, and through an import hook
the moment the others are imported (so install() may come before or after
the framework's import).  A watched module's loader is wrapped either way,
so importlib.reload() of it applies the patch again.  install() is
idempotent; uninstall() puts every original back (loaders included) and
removes the hook.
"""
import importlib.abc
import importlib.machinery
import sys
import threading

_MISSING = object()
_BRIDGES = {}


def bridge(ours, theirs, name):
    """A class that is `ours` (every method) and a subclass of `theirs`, so
    the framework's isinstance checks against its own class hold; one per
    pair, so an object made under one install() is still one after the
    next.  `ours` itself when `theirs` is None or already a base."""
    if theirs is None or not isinstance(theirs, type) or issubclass(ours, theirs):
        return ours
    if (ours, theirs) not in _BRIDGES:
        _BRIDGES[ours, theirs] = type(name, (ours, theirs), {"__module__": ours.__module__, "__doc__": ours.__doc__,
                                                             "__qualname__": name})
    return _BRIDGES[ours, theirs]


class ModulePatch:
    """The attributes to set on one module: `attributes(module)` returns
    {name: value}, computed when the module is there (it may read the
    module's originals); uninstall() sets the originals back.  `after(module)`
    runs right after applying (for state that uninstall must leave alone) and
    `before_undo(module)` right before undoing."""

    def __init__(self, module_name, attributes, after=None, before_undo=None):
        self.module_name = module_name
        self.attributes = attributes
        self.after = after
        self.before_undo = before_undo


class _PatchingLoader(importlib.abc.Loader):
    """The module's own loader, then the patch."""

    def __init__(self, loader, apply):
        self._loader = loader
        self._apply = apply

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._apply(module)

    def __getattr__(self, name):  # get_source, is_package, resource readers, ...
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the watched modules with the other finders and wraps their loader."""

    def __init__(self, installer):
        self._installer = installer
        self._busy = threading.local()

    def find_spec(self, fullname, path, target=None):
        patch = self._installer._watched.get(fullname)
        if patch is None or getattr(self._busy, "name", None) == fullname:
            return None
        self._busy.name = fullname
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._busy.name = None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = self._installer._patching_loader(patch, spec.loader)
        return spec


class Installer:
    """Applies ModulePatches now and on import; undoes them all."""

    def __init__(self, patches):
        self._patches = list(patches)
        self._watched = {}
        self._originals = {}  # module name -> {attribute: original value or _MISSING}
        self._finder = None
        self._lock = threading.RLock()

    @property
    def installed(self):
        return self._finder is not None

    def install(self):
        with self._lock:
            if self.installed:
                return False
            self._watched = {p.module_name: p for p in self._patches}
            self._finder = _Finder(self)
            sys.meta_path.insert(0, self._finder)
            try:
                for patch in self._patches:
                    module = sys.modules.get(patch.module_name)
                    if module is not None:
                        self._wrap_loader(patch, module)
                        self._apply(patch, module)
            except BaseException:
                self.uninstall()  # all or nothing: what was applied is undone
                raise
            return True

    def uninstall(self):
        with self._lock:
            if not self.installed:
                return False
            sys.meta_path.remove(self._finder)
            self._finder = None
            self._watched = {}
            for patch in reversed(self._patches):
                module = sys.modules.get(patch.module_name)
                originals = self._originals.pop(patch.module_name, None)
                spec = getattr(module, "__spec__", None)
                if spec is not None and isinstance(spec.loader, _PatchingLoader):
                    spec.loader = module.__loader__ = spec.loader._loader
                if module is None or originals is None:
                    continue
                if patch.before_undo is not None:
                    patch.before_undo(module)
                for name, value in originals.items():
                    if value is _MISSING:
                        module.__dict__.pop(name, None)
                    else:
                        setattr(module, name, value)
            return True

    def originals(self, module_name):
        """{attribute: the value the patch replaced} of a patched module, or None."""
        originals = self._originals.get(module_name)
        return None if originals is None else {k: v for k, v in originals.items() if v is not _MISSING}

    def _patching_loader(self, patch, loader):
        def executed(module):
            with self._lock:
                if not self.installed:
                    return
                self._originals.pop(patch.module_name, None)  # (re-)executed: its attributes are fresh
                try:
                    self._apply(patch, module)
                except BaseException:
                    self.uninstall()  # all or nothing, as install() itself: the import fails once, saying why
                    raise
        return _PatchingLoader(loader, executed)

    def _wrap_loader(self, patch, module):
        spec = getattr(module, "__spec__", None)
        if spec is None or spec.loader is None or isinstance(spec.loader, _PatchingLoader) or \
                not hasattr(spec.loader, "exec_module"):
            return
        spec.loader = module.__loader__ = self._patching_loader(patch, spec.loader)

    def _apply(self, patch, module):
        with self._lock:
            if patch.module_name in self._originals:
                return  # applied already
            replacements = patch.attributes(module)
            self._originals[patch.module_name] = {name: module.__dict__.get(name, _MISSING) for name in replacements}
            for name, value in replacements.items():
                setattr(module, name, value)
            if patch.after is not None:
                patch.after(module)
