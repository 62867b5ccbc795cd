"""kernel.adj: Warp's read-only view of a kernel (arguments with read/write, AST, statics)."""

import ast

import weft as wp

SCALE = 3.0


@wp.kernel
def atomics(a: wp.array(dtype=wp.int32), b: wp.array(dtype=float), c: wp.array(dtype=float), n: int):
    i = wp.tid()
    wp.atomic_add(a, i, 1)
    c[i] = b[i] * wp.static(SCALE * 2.0) + float(n)


def test_args_say_what_the_kernel_reads_and_writes():
    args = atomics.adj.args
    assert [a.label for a in args] == ["a", "b", "c", "n"]
    assert [(a.is_read, a.is_write) for a in args[:3]] == [(False, True), (True, False), (False, True)]
    assert args[3].type is wp.int32


def test_tree_source_and_statics():
    view = atomics.adj
    assert isinstance(view.tree, ast.FunctionDef) and view.tree.name == "atomics"
    assert "wp.atomic_add(a, i, 1)" in view.source
    assert list(view.resolved_static_expressions.values()) == [6.0]
    assert not view.has_unresolved_static_expressions
    assert not hasattr(view, "blocks")  # no generated C++ to inspect
