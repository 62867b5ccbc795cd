"""float16 in kernels, with Warp's rules: stored as IEEE half, computed in float32 and rounded
back after each operation (as numpy's float16 arithmetic does, so results are compared bit
for bit), atomics add/sub, parameters from Python numbers, PyTorch half tensors.
Conversions to and from the other scalar types: test_half_conversions.py."""

import numpy as np
import pytest

import weft as wp


def bits(a) -> np.ndarray:
    return np.asarray(a).view(np.uint16)


@wp.kernel
def to_half(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float16), back: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = wp.float16(x[i])
    back[i] = wp.float32(y[i])


def test_stores_round_to_nearest_even_bit_exact():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        np.exp(rng.uniform(-20, 12, 4000)).astype(np.float32) * rng.choice([-1, 1], 4000).astype(np.float32),
        np.array([65504.0, 65520.0, 65519.99, 2.0**-24, 2.0**-25, 3 * 2.0**-26, np.inf, -np.inf, -0.0,
                  1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11], np.float32)])  # range ends, subnormals, ties
    y, back = wp.zeros(len(x), dtype=wp.float16), wp.zeros(len(x), dtype=wp.float32)
    wp.launch(to_half, len(x), inputs=[wp.array(x), y, back])
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(bits(y.numpy()), bits(want))
    np.testing.assert_array_equal(back.numpy(), want.astype(np.float32))  # loads are exact


@wp.kernel
def arith(a: wp.array(dtype=wp.float16), b: wp.array(dtype=wp.float16), out: wp.array2d(dtype=wp.float16)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[0, i] = x + y
    out[1, i] = x - y
    out[2, i] = x * y
    out[3, i] = x / y
    out[4, i] = x * y + x
    out[5, i] = wp.min(x, y)
    out[6, i] = wp.float16(wp.float32(x) * wp.float32(y) + wp.float32(x))  # one rounding


def test_arithmetic_rounds_after_each_operation():
    rng = np.random.default_rng(1)
    a = (rng.normal(size=3000) * 30).astype(np.float16)
    b = (rng.normal(size=3000) * 3).astype(np.float16)
    out = wp.zeros((7, 3000), dtype=wp.float16)
    wp.launch(arith, 3000, inputs=[wp.array(a), wp.array(b), out])
    af, bf = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(over="ignore"):
        want = [a + b, a - b, a * b, a / b, (a * b) + a, np.minimum(a, b), (af * bf + af).astype(np.float16)]
    for row, expected in enumerate(want):
        np.testing.assert_array_equal(bits(out.numpy()[row]), bits(expected), err_msg=str(row))
    assert not np.array_equal(out.numpy()[4], out.numpy()[6])  # the two roundings differ somewhere


@wp.kernel
def atomics(x: wp.array(dtype=wp.float16), out: wp.array(dtype=wp.float16)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.float16(1.0))
    wp.atomic_sub(out, 1, x[i])
    out[2 + i % 3] += wp.float16(0.5)


def test_atomics():
    n = 3000
    x = np.full(n, 0.25, np.float16)
    out = wp.zeros(5, dtype=wp.float16)
    wp.launch(atomics, n, inputs=[wp.array(x), out])
    got = out.numpy().astype(np.float32)
    assert got[0] == 2048.0  # each add rounds: 2048 + 1 stays 2048 in float16
    assert got[1] == -512.0  # spacing 0.5 past 512: adding 0.25 rounds back (ties to even)
    np.testing.assert_array_equal(got[2:], [500.0] * 3)


def test_min_max_are_refused_as_in_warp():
    @wp.kernel
    def amin(out: wp.array(dtype=wp.float16)):
        wp.atomic_min(out, 0, wp.float16(1.0))

    with pytest.raises(Exception, match=r"atomic_min\(\) operations only work on arrays with \[u\]int32, "
                                        r"\[u\]int64, bfloat16, float32, or float64"):
        wp.launch(amin, 1, inputs=[wp.zeros(1, dtype=wp.float16)])


@wp.kernel
def param(x: wp.float16, v: wp.vec3h, out: wp.array(dtype=wp.float16)):
    out[0] = x
    out[1] = wp.dot(v, v)


@pytest.mark.parametrize("value", [3.14159, np.float32(-0.7), np.float16(0.333), 7, 70000.0])
def test_parameters_from_numbers(value):
    out = wp.zeros(2, dtype=wp.float16)
    wp.launch(param, 1, inputs=[value, wp.vec3h(0.1, 0.2, 0.3), out])
    with np.errstate(over="ignore"):
        assert bits(out.numpy())[0] == bits(np.float16(value))
    v = np.array([0.1, 0.2, 0.3], np.float16)
    assert abs(float(out.numpy()[1]) - float(v.astype(np.float64) @ v)) <= 2e-4


@wp.kernel
def scale_half(x: wp.array(dtype=wp.float16), y: wp.array(dtype=wp.float16)):
    i = wp.tid()
    y[i] = x[i] * wp.float16(3.0)


def test_torch_half_tensors_share_memory_and_gradients():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -0.3, 7.1], dtype=torch.float16, requires_grad=True)
    x = wp.from_torch(t)
    assert x.dtype is wp.float16 and x.grad is not None and x.grad.dtype is wp.float16
    y = wp.zeros(3, dtype=wp.float16, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_half, 3, inputs=[x, y])
    assert torch.equal(wp.to_torch(y), t.detach() * 3.0)
    tape.backward(grads={y: wp.array([1.0, 0.5, 2.0], dtype=wp.float16)})
    assert t.grad.dtype == torch.float16 and t.grad.tolist() == [3.0, 1.5, 6.0]
