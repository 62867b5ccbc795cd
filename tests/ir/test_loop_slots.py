"""Loops drop the carried slots they pass through unchanged (weft/ir/loop_slots.py), so an
inner loop's bounds are values the outer loop's bounds-check guard can use."""

import numpy as np

import weft as wp
from weft.codegen.llvm import KernelCodegen
from weft.ir.core import walk


@wp.kernel
def rows_times_columns(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), n: int, m: int,
                       out: wp.array(dtype=float)):
    i = wp.tid()
    total = float(0.0)  # noqa: UP018 - a variable, as Warp requires
    for j in range(n):
        scale = float(j)  # (`float(j)` and `range(m)` pass j and m to calls: once carried)
        for k in range(m):
            total += a[i, k] * b[j, k] * scale
    out[i] = total


def test_only_updated_values_are_carried():
    loops = [op for op in walk(rows_times_columns.ir().body) if op.name == "for"]
    carried = [[a.hint for a in loop.regions[0].args[1:]] for loop in loops]
    assert all("m" not in names for names in carried), carried
    assert all("total" in names for names in carried)
    rng = np.random.default_rng(0)
    a, b = rng.random((5, 4)).astype(np.float32), rng.random((3, 4)).astype(np.float32)
    out = wp.zeros(5, dtype=float)
    wp.launch(rows_times_columns, 5, [wp.array(a, dtype=float), wp.array(b, dtype=float), 3, 4, out])
    np.testing.assert_allclose(out.numpy(), a @ (b * np.arange(3)[:, None]).T.sum(axis=1), rtol=1e-5)


def test_the_outer_guard_proves_accesses_indexed_by_inner_loops():
    # b[j, k]: j is the outer loop's variable, k the inner loop's over range(m), m known before
    # both loops; the outer loop's guard proves it, so its fast copy runs the access unchecked
    fn = rows_times_columns.ir()
    cg = KernelCodegen(fn, (True, True, False, False, True))
    cg.generate()
    outer = next(op for op in walk(fn.body) if op.name == "for")
    site = next(s for s in cg.sites if s.op.name == "load" and s.op.operands[0].hint == "b")
    assert ("loop", id(outer)) in site.requires
