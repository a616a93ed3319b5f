# SPDX-License-Identifier: Apache-2.0
"""rngtrk's Python package points one way: no module imports, at its top or
inside a function, a module that imports it back, directly or through
others.  The modules that need a module above them are handed it instead
(_megatron_install.bind, _slapo_install.installer, the process tracker's
getter in _tracker); this test reads the imports with ast, without
importing anything."""
import ast
import os

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rngtrk")


def module_name(path):
    relative = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].replace(os.sep, ".")
    return relative[:-len(".__init__")] if relative.endswith(".__init__") else relative


def imports_of(path, name):
    """The package's modules `path` (module `name`) imports, anywhere in it."""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = (base + "." + node.module if node.module else base) if node.level else (node.module or "")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def graph():
    modules = {}
    for folder, _, files in os.walk(PACKAGE):
        for file in files:
            if file.endswith(".py"):
                path = os.path.join(folder, file)
                modules[module_name(path)] = path
    edges = {}
    for name, path in modules.items():
        # A submodule's import of its own package (`from . import x` reads
        # the package's __init__) is the package's shape, not an arrow up:
        # only arrows between modules count.
        edges[name] = {m for m in imports_of(path, name) if m in modules and m != name and
                       not name.startswith(m + ".")}
    return edges


def circles(edges):
    """Every strongly connected group of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_reader_sees_the_imports_it_must():
    edges = graph()
    assert "rngtrk.torch._tracker" in edges["rngtrk.torch.megatron"]
    assert "rngtrk.torch._megatron_install" in edges["rngtrk.torch.megatron"]
    assert "rngtrk.torch.te" in edges["rngtrk.torch.megatron"], "an import inside a function counts"
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_of_the_package_imports_one_that_imports_it():
    assert circles(graph()) == []
