"""Large funcs kept as calls in very large kernels (ir/outline.py, codegen/call_ops.py).

The sizes are lowered here so that small kernels take the path: every func of values is
kept as a call, emitted once as an LLVM function."""

import numpy as np
import pytest

import weft as wp
from tests.autodiff.helpers import check_tape
from weft.ir import outline
from weft.ir.core import walk
from weft.ir.printer import format_function


@pytest.fixture
def keep_calls(monkeypatch):
    monkeypatch.setattr(outline, "OUTLINE_KERNEL_OPS", 0)
    monkeypatch.setattr(outline, "OUTLINE_FUNC_OPS", 1)


@wp.func
def _spin(v: wp.vec3, turns: int) -> wp.vec3:
    """A loop and a branch: rotate v about z by 0.3 rad `turns` times, damped past |x| > 1."""
    c, s = wp.cos(0.3), wp.sin(0.3)
    for _ in range(turns):
        v = wp.vec3(c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])
        if wp.abs(v[0]) > 1.0:
            v = v * 0.9
    return v


@wp.func
def _energy(a: wp.vec3, b: wp.vec3) -> float:
    return wp.dot(_spin(a, 3), _spin(b, 2)) + wp.length(_spin(a + b, 1))


@wp.func
def _component(v: wp.vec3, k: int) -> float:
    return v[k] * 2.0


def _make_kernel():
    @wp.kernel(module="unique")
    def pair_energy(x: wp.array(dtype=wp.vec3), k: int, out: wp.array(dtype=float)):
        i = wp.tid()
        a = x[i]
        b = x[(i + 1) % x.shape[0]]
        out[i] = _energy(a, b) + _energy(b, a) * 0.5 + _component(a, k)
    return pair_energy


def _run(kernel, x, k=1):
    out = wp.zeros(len(x), dtype=float)
    wp.launch(kernel, len(x), inputs=[wp.array(x, dtype=wp.vec3), k, out])
    return out.numpy()


def test_kept_calls_compute_what_inlined_calls_do(keep_calls):
    x = np.random.default_rng(0).normal(size=(37, 3)).astype(np.float32)
    kept = _make_kernel()
    fn = kept.ir()
    bodies = outline.kept_bodies(fn)
    assert {b.name for b in bodies} >= {"_energy", "_spin"}
    assert sum(op.name == "call_func" for op in walk(fn.body)) == 3  # (2 x _energy, _component)
    text = kept.llvm_ir()
    assert text.count("define internal") >= 3 and "call" in text and "weft_func__spin" in text
    got = _run(kept, x)
    outline.OUTLINE_KERNEL_OPS = 10**9  # (monkeypatched: undone after the test)
    kept.forget_compiled()  # (the same kernel, its IR built again: every call inlined)
    assert not outline.kept_bodies(kept.ir())
    np.testing.assert_array_equal(got, _run(kept, x))


def test_an_error_in_a_kept_call_names_the_funcs_line(keep_calls):
    x = np.ones((4, 3), dtype=np.float32)
    with pytest.raises(IndexError, match=r"test_outline\.py:\d+"):
        _run(_make_kernel(), x, k=5)


def test_gradients_through_kept_calls_match_finite_differences(keep_calls):
    @wp.func
    def _spin64(v: wp.vec3d, turns: int) -> wp.vec3d:
        c, s = wp.cos(wp.float64(0.3)), wp.sin(wp.float64(0.3))
        for _ in range(turns):
            v = wp.vec3d(c * v[0] - s * v[1], s * v[0] + c * v[1], v[2] * v[0])
        return v

    @wp.kernel(module="unique")
    def loss(x: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float64)):
        i = wp.tid()
        a = _spin64(x[i], 2)
        b = _spin64(a, 3)
        wp.atomic_add(out, 0, wp.dot(a, b) + wp.length(_spin64(b, 1)))

    assert outline.kept_bodies(loss.ir())
    x0 = np.random.default_rng(1).normal(size=(5, 3))

    def record(arrays):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(loss, 5, inputs=[arrays[0], out])
        return out

    check_tape(record, [(x0, wp.vec3d)], rtol=1e-6, atol=1e-8)


def test_funcs_of_arrays_are_inlined_and_the_ir_text_holds_the_bodies(keep_calls):
    @wp.func
    def _first(a: wp.array(dtype=float)) -> float:
        return a[0] * 2.0

    @wp.kernel(module="unique")
    def reads(a: wp.array(dtype=float), v: wp.vec3, out: wp.array(dtype=float)):
        out[wp.tid()] = _first(a) + _spin(v, 2)[0]

    fn = reads.ir()
    assert [b.name for b in outline.kept_bodies(fn)] == ["_spin"]  # (_first reads an array: inlined)
    text = format_function(fn)
    assert "func _spin#0(" in text and "body=#0" in text  # (the cache key covers the body)
    out = wp.zeros(1, dtype=float)
    wp.launch(reads, 1, inputs=[wp.array([1.5], dtype=float), wp.vec3(1.0, 0.0, 0.0), out])
    c, s = np.cos(0.3), np.sin(0.3)
    v = np.array([1.0, 0.0])
    for _ in range(2):
        v = np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])
    np.testing.assert_allclose(out.numpy()[0], 3.0 + v[0], rtol=1e-6)


@wp.func
def _cube(x: float) -> float:
    return x * x * x


@wp.func
def _slope(x: float) -> float:
    return wp.grad(_cube)(x) + 1.0


def test_a_kept_func_may_call_the_gradient_of_another(keep_calls):
    @wp.kernel(module="unique")
    def slopes(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = _slope(x[i]) + _slope(2.0 * x[i])

    assert [b.name for b in outline.kept_bodies(slopes.ir())] == ["_slope"]
    x = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    out = wp.zeros(3, dtype=float)
    wp.launch(slopes, 3, inputs=[wp.array(x), out])
    np.testing.assert_allclose(out.numpy(), 3 * x**2 + 1 + 3 * (2 * x) ** 2 + 1, rtol=1e-6)
