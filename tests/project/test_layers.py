"""The house reads as the pipeline: no module imports itself back through others.

The layer contract (import-linter, in `make lint`) keeps packages pointing down; this test
keeps modules inside a package from importing in a circle, which a layer check cannot see
(``agents.builtin`` <-> ``agents.registry`` once; ``magi.cli`` <-> its command modules).
"""

from __future__ import annotations

from pathlib import Path

import grimp


def cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    edges = {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    group.append(m)
                    if m == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_of_magi_imports_in_a_circle():
    """Every import chain between magi's shipped modules ends; magi.testing is exempt."""
    graph = grimp.build_graph("magi", exclude_type_checking_imports=True)
    shipped = {m for m in graph.modules if not m.startswith("magi.testing")}
    assert cycles(graph, shipped) == []


def test_the_cycle_finder_finds_a_cycle():
    """The finder itself is not a test that cannot fail."""

    class Graph:
        modules = frozenset({"a", "b", "c"})

        def find_modules_directly_imported_by(self, m: str) -> set[str]:
            return {"a": {"b"}, "b": {"a"}, "c": {"a"}}[m]

    assert cycles(Graph(), {"a", "b", "c"}) == [["a", "b"]]  # type: ignore[arg-type]


def test_the_top_of_the_house_holds_only_packages_and_the_error_tree():
    """No loose modules: a new module goes into the package whose floor it belongs to
    (docs/architecture.md); at the top stand only packages, errors.py and __main__.py."""
    import magi

    top = Path(magi.__file__).parent
    loose = sorted(
        p.name
        for p in top.glob("*.py")
        if p.name not in {"__init__.py", "__main__.py", "errors.py"}
    )
    assert loose == []
    packages = {p.name for p in top.iterdir() if (p / "__init__.py").is_file()}
    assert {"model", "core", "git", "sandbox", "action", "testing"} <= packages
