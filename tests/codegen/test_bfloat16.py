"""bfloat16 in kernels: a float32 in registers rounded to bfloat16 (nearest, ties to even)
after each operation, 16 bits in memory. Results are compared bit for bit with ml_dtypes,
whose bfloat16 arithmetic is the same (each operation in float32, then rounded)."""

import ml_dtypes
import numpy as np
import pytest

import weft as wp
from weft._src.types import _np_bfloat16_bits_to_float32, _np_float32_to_bfloat16_bits

BF = ml_dtypes.bfloat16
vec3bf = wp.types.vector(3, dtype=wp.bfloat16)
mat22bf = wp.types.matrix(shape=(2, 2), dtype=wp.bfloat16)


def bits(a) -> np.ndarray:
    return np.asarray(a).view(np.uint16)


def f32_from_bits(words) -> np.ndarray:
    return np.asarray(words, np.uint32).view(np.float32)


# Values whose rounding is delicate: ties (0x3F808000 rounds down to even, 0x3F818000 up),
# the largest finite bfloat16 and the first value past it, subnormals, signed zeros, NaN
# payloads a truncation would turn into infinity, infinities.
EDGE = f32_from_bits([0x3F808000, 0x3F818000, 0x3F80FFFF, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF,
                      0x00008000, 0x00018000, 0x80000000, 0x00000000, 0x7F800001, 0xFFBFFFFF,
                      0x7FC00000, 0x7F800000, 0xFF800000, 0x3EAAAAAB, 0xC2C80000])


def to_bf(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # (numpy warns when NaNs are cast)
        return x.astype(BF)


def random_f32(n, seed=0):
    rng = np.random.default_rng(seed)
    mags = np.exp(rng.uniform(-30, 30, n)).astype(np.float32)
    return np.concatenate([EDGE, mags * rng.choice([-1, 1], n).astype(np.float32)])


@wp.kernel
def to_bf16(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    y[i] = wp.bfloat16(x[i])


@wp.kernel
def from_bf16(x: wp.array(dtype=wp.bfloat16), y: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = wp.float32(x[i])


def test_stores_round_to_nearest_even_bit_exact():
    x = random_f32(5000)
    y = wp.zeros(len(x), dtype=wp.bfloat16)
    wp.launch(to_bf16, len(x), inputs=[wp.array(x), y])
    np.testing.assert_array_equal(bits(y.numpy()), bits(to_bf(x)))
    assert bits(y.numpy())[:2].tolist() == [0x3F80, 0x3F82]  # the two ties
    assert bits(y.numpy())[10] == 0x7FC0 and bits(y.numpy())[11] == 0xFFC0  # NaNs stay NaN


def test_loads_are_exact():
    words = np.arange(0, 1 << 16, dtype=np.uint16)  # every bfloat16
    x = wp.array(words, dtype=wp.bfloat16)  # (uint16 data: the bits, as Warp)
    y = wp.zeros(len(words), dtype=wp.float32)
    wp.launch(from_bf16, len(words), inputs=[x, y])
    np.testing.assert_array_equal(y.numpy().view(np.uint32), words.astype(np.uint32) << 16)


def test_host_helpers_match_ml_dtypes():
    x = random_f32(1000, seed=1)
    np.testing.assert_array_equal(_np_float32_to_bfloat16_bits(x), bits(to_bf(x)))
    words = np.arange(0, 1 << 16, 7, dtype=np.uint16)
    np.testing.assert_array_equal(_np_bfloat16_bits_to_float32(words).view(np.uint32),
                                  words.astype(np.uint32) << 16)


@wp.kernel
def arith(a: wp.array(dtype=wp.bfloat16), b: wp.array(dtype=wp.bfloat16), out: wp.array2d(dtype=wp.bfloat16)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[0, i] = x + y
    out[1, i] = x - y
    out[2, i] = x * y
    out[3, i] = x / y
    out[4, i] = x * y + x  # rounded after the product, then after the sum
    out[5, i] = -x
    out[6, i] = wp.min(x, y)
    out[7, i] = wp.max(x, y)


def test_arithmetic_rounds_after_each_operation():
    rng = np.random.default_rng(2)
    a = (rng.normal(size=2000) * 100).astype(BF)
    b = (rng.normal(size=2000) * 3).astype(BF)
    out = wp.zeros((8, 2000), dtype=wp.bfloat16)
    wp.launch(arith, 2000, inputs=[wp.array(a), wp.array(b), out])
    want = [a + b, a - b, a * b, a / b, (a * b) + a, -a, np.minimum(a, b), np.maximum(a, b)]
    for row, expected in enumerate(want):
        np.testing.assert_array_equal(bits(out.numpy()[row]), bits(np.asarray(expected, BF)), err_msg=str(row))


@wp.kernel
def accumulate(x: wp.array(dtype=wp.bfloat16), out: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    s = wp.bfloat16(0.0)
    for _ in range(300):
        s += x[i]
    out[i] = s


def test_a_loop_carried_sum_is_rounded_each_step():
    x = wp.array([1.0, 0.1], dtype=wp.bfloat16)
    out = wp.zeros(2, dtype=wp.bfloat16)
    wp.launch(accumulate, 2, inputs=[x, out])
    want = []
    for v in x.numpy():
        s = BF(0.0)
        for _ in range(300):
            s = BF(s + v)
        want.append(s)
    np.testing.assert_array_equal(bits(out.numpy()), bits(np.array(want, BF)))
    assert float(out.numpy()[0]) == 256.0  # 256 + 1 rounds back to 256 in bfloat16


@wp.kernel
def conversions(x: wp.array(dtype=wp.bfloat16), d: wp.array(dtype=wp.float64), i32: wp.array(dtype=wp.int32),
                u8: wp.array(dtype=wp.uint8), h: wp.array(dtype=wp.float16), back_d: wp.array(dtype=wp.bfloat16),
                back_i: wp.array(dtype=wp.bfloat16), back_h: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    d[i] = wp.float64(x[i])
    i32[i] = wp.int32(x[i])
    u8[i] = wp.uint8(wp.abs(x[i]))
    h[i] = wp.float16(x[i])
    back_d[i] = wp.bfloat16(d[i] * wp.float64(1.0000001))
    back_i[i] = wp.bfloat16(i32[i] * 1001)
    back_h[i] = wp.bfloat16(h[i])


def test_conversions_to_and_from_other_types():
    x = np.array([1.5, -2.75, 100.0, 0.3, -0.0, 200.0], dtype=BF)
    n = len(x)
    outs = [wp.zeros(n, dtype=t) for t in (wp.float64, wp.int32, wp.uint8, wp.float16,
                                           wp.bfloat16, wp.bfloat16, wp.bfloat16)]
    wp.launch(conversions, n, inputs=[wp.array(x), *outs])
    d, i32, u8, h, back_d, back_i, back_h = (o.numpy() for o in outs)
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(d, xf.astype(np.float64))
    np.testing.assert_array_equal(i32, np.trunc(xf).astype(np.int32))
    np.testing.assert_array_equal(u8, np.abs(xf).astype(np.uint8))
    np.testing.assert_array_equal(h, xf.astype(np.float16))
    # float64 and int32 convert through float32, then round to bfloat16
    np.testing.assert_array_equal(bits(back_d), bits((d * 1.0000001).astype(np.float32).astype(BF)))
    np.testing.assert_array_equal(bits(back_i), bits((i32 * 1001).astype(np.float32).astype(BF)))
    np.testing.assert_array_equal(bits(back_h), bits(h.astype(np.float32).astype(BF)))


@wp.kernel
def math_fns(x: wp.array(dtype=wp.bfloat16), out: wp.array2d(dtype=wp.bfloat16)):
    i = wp.tid()
    v = x[i]
    out[0, i] = wp.sin(v)
    out[1, i] = wp.exp(v)
    out[2, i] = wp.sqrt(wp.abs(v))
    out[3, i] = wp.tanh(v)
    out[4, i] = wp.pow(wp.abs(v), wp.bfloat16(1.5))


def test_math_builtins_compute_in_float32_and_round_once():
    x = np.linspace(-3, 3, 61).astype(BF)
    out = wp.zeros((5, len(x)), dtype=wp.bfloat16)
    wp.launch(math_fns, len(x), inputs=[wp.array(x), out])
    xf = x.astype(np.float64)
    refs = [np.sin(xf), np.exp(xf), np.sqrt(np.abs(xf)), np.tanh(xf), np.abs(xf) ** 1.5]
    for row, ref in enumerate(refs):
        got = out.numpy()[row].astype(np.float64)
        # float32 results are within an ulp of float32; rounded once to bfloat16 they are
        # within half a bfloat16 ulp (2^-9 relative) plus that
        np.testing.assert_allclose(got, ref, rtol=2.0**-8, atol=1e-30, err_msg=str(row))


@wp.kernel
def folded(out: wp.array(dtype=wp.bfloat16)):
    out[0] = wp.bfloat16(0.1) * wp.bfloat16(3.0)
    out[1] = wp.bfloat16(1.0) / wp.bfloat16(3.0)
    out[2] = wp.bfloat16(3.14159)


def test_constants_are_bfloat16_values():
    out = wp.zeros(3, dtype=wp.bfloat16)
    wp.launch(folded, 1, inputs=[out])
    want = [BF(0.1) * BF(3.0), BF(1.0) / BF(3.0), BF(3.14159)]
    np.testing.assert_array_equal(bits(out.numpy()), bits(np.array(want, BF)))


@wp.kernel
def param(x: wp.bfloat16, v: vec3bf, m: mat22bf, out: wp.array(dtype=wp.bfloat16)):
    out[0] = x
    out[1] = v[0] + v[1] + v[2]
    out[2] = m[0, 1] * m[1, 0]


@pytest.mark.parametrize("value", [3.14159, np.float32(-0.7), BF(2.5), np.float16(0.333), 7])
def test_scalar_parameters_take_python_numbers_and_ml_dtypes_scalars(value):
    out = wp.zeros(3, dtype=wp.bfloat16)
    wp.launch(param, 1, inputs=[value, vec3bf(0.1, 0.2, 0.3), mat22bf(1.0, 1.1, 1.3, 1.0), out])
    assert bits(out.numpy())[0] == bits(np.float32(value).astype(BF))
    v = np.array([0.1, 0.2, 0.3], np.float32).astype(BF)
    assert bits(out.numpy())[1] == bits(np.asarray((v[0] + v[1]) + v[2], BF))
    assert bits(out.numpy())[2] == bits(np.asarray(BF(1.1) * BF(1.3), BF))


@wp.struct
class Sample:
    weight: wp.bfloat16
    offset: vec3bf
    scale: float


@wp.kernel
def use_struct(s: Sample, arr: wp.array(dtype=Sample), out: wp.array(dtype=vec3bf)):
    out[0] = s.offset * s.weight
    arr[0] = s


def test_struct_fields_and_vectors():
    s = Sample()
    s.weight, s.offset, s.scale = wp.bfloat16(1.3), vec3bf(1.0, 2.0, 3.0), 2.0
    arr, out = wp.zeros(1, dtype=Sample), wp.zeros(1, dtype=vec3bf)
    wp.launch(use_struct, 1, inputs=[s, arr, out])
    w = BF(1.3)
    np.testing.assert_array_equal(bits(out.numpy()[0]), bits(np.array([1.0, 2.0, 3.0], BF) * w))
    back = arr.list()[0]
    assert back.weight == w and back.scale == 2.0
    np.testing.assert_array_equal(np.asarray(back.offset, np.float32), [1.0, 2.0, 3.0])


@wp.kernel
def bits_of(x: wp.array(dtype=wp.bfloat16), out: wp.array(dtype=wp.int16), again: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    out[i] = wp.cast(x[i], wp.int16)
    again[i] = wp.cast(out[i], wp.bfloat16)


def test_cast_reinterprets_the_16_bits():
    x = np.array([1.0, -2.5, 3.0e38], dtype=BF)
    out, again = wp.zeros(3, dtype=wp.int16), wp.zeros(3, dtype=wp.bfloat16)
    wp.launch(bits_of, 3, inputs=[wp.array(x), out, again])
    np.testing.assert_array_equal(out.numpy(), bits(x).view(np.int16))
    np.testing.assert_array_equal(bits(again.numpy()), bits(x))


# Atomics: add/sub/min/max by compare-and-swap on the 16-bit word -----------------------------
@wp.kernel
def atomics(x: wp.array(dtype=wp.bfloat16), out: wp.array(dtype=wp.bfloat16), old: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.bfloat16(1.0))
    wp.atomic_sub(out, 1, wp.bfloat16(0.5))
    wp.atomic_min(out, 2, x[i])
    wp.atomic_max(out, 3, x[i])
    old[i] = wp.atomic_add(out, 4 + i, x[i])  # a slot of its own: the old value is known


def test_atomics_under_contention():
    n = 2000
    x = np.random.default_rng(3).normal(size=n).astype(BF)
    out = wp.array(np.r_[0.0, 0.0, 0.0, 0.0, np.full(n, 10.0)], dtype=wp.bfloat16)
    old = wp.zeros(n, dtype=wp.bfloat16)
    wp.launch(atomics, n, inputs=[wp.array(x), out, old])
    got = out.numpy().astype(np.float32)
    assert got[0] == 256.0  # each add rounds: 256 + 1 stays 256
    assert got[1] == -128.0
    assert got[2] == min(0.0, x.astype(np.float32).min()) and got[3] == max(0.0, x.astype(np.float32).max())
    np.testing.assert_array_equal(bits(out.numpy()[4:]), bits(BF(10.0) + x))
    np.testing.assert_array_equal(old.numpy().astype(np.float32), 10.0)


def test_small_exact_sums_are_exact():
    @wp.kernel
    def count(out: wp.array(dtype=wp.bfloat16)):
        i = wp.tid()
        out[i % 4] += wp.bfloat16(1.0)

    out = wp.zeros(4, dtype=wp.bfloat16)
    wp.launch(count, 400, inputs=[out])
    np.testing.assert_array_equal(out.numpy().astype(np.float32), [100.0] * 4)


def test_exchange_is_refused_as_in_warp():
    @wp.kernel
    def exch(out: wp.array(dtype=wp.bfloat16)):
        wp.atomic_exch(out, 0, wp.bfloat16(1.0))

    with pytest.raises(Exception, match=r"atomic_exch\(\) operations only work on arrays with \[u\]int32, "
                                        r"\[u\]int64, float32, or float64"):
        wp.launch(exch, 1, inputs=[wp.zeros(1, dtype=wp.bfloat16)])


# Host side ---------------------------------------------------------------------------------
def test_arrays_from_numbers_bits_and_ml_dtypes():
    a = wp.array([1.0, 3.14159, -1e-6], dtype=wp.bfloat16)
    assert a.numpy().dtype == BF
    np.testing.assert_array_equal(bits(a.numpy()), bits(np.array([1.0, 3.14159, -1e-6], np.float32).astype(BF)))
    raw = wp.array(np.array([0x3F80, 0x4049], np.uint16), dtype=wp.bfloat16)  # bits, as Warp
    np.testing.assert_array_equal(raw.numpy().astype(np.float32), [1.0, 3.140625])
    raw.assign(np.array([0x4000, 0xBF80], np.uint16))
    np.testing.assert_array_equal(raw.numpy().astype(np.float32), [2.0, -1.0])
    inferred = wp.array(np.array([1.5, 2.5], BF))
    assert inferred.dtype is wp.bfloat16
    assert wp.array(np.array([[1.0, 2.0, 3.0]], np.float64), dtype=vec3bf).numpy().dtype == BF
    assert wp.bfloat16(3.14159) == BF(np.float32(3.14159))


def test_verify_fp_sees_bfloat16_arrays(capfd):
    @wp.kernel
    def root(x: wp.array(dtype=wp.bfloat16), y: wp.array(dtype=wp.bfloat16)):
        i = wp.tid()
        y[i] = wp.sqrt(x[i])

    saved = wp.config.verify_fp
    wp.config.verify_fp = True
    try:
        wp.launch(root, 2, inputs=[wp.array([1.0, -1.0], dtype=wp.bfloat16), wp.zeros(2, dtype=wp.bfloat16)])
    finally:
        wp.config.verify_fp = saved
    assert "non-finite values (nan) in argument 'y'" in capfd.readouterr().out


# PyTorch ---------------------------------------------------------------------------------------
@wp.kernel
def scale_bf16(x: wp.array(dtype=wp.bfloat16), y: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    y[i] = x[i] * wp.bfloat16(3.0)


def test_torch_bfloat16_tensors_share_memory():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -0.3, 7.1], dtype=torch.bfloat16)
    out = torch.zeros(3, dtype=torch.bfloat16)
    x = wp.from_torch(t)
    assert x.dtype is wp.bfloat16 and wp.dtype_from_torch(torch.bfloat16) is wp.bfloat16
    wp.launch(scale_bf16, 3, inputs=[x, wp.from_torch(out)])
    assert torch.equal(out, t * 3.0)  # torch rounds bfloat16 products the same way
    back = wp.to_torch(wp.array([0.1, 0.2], dtype=wp.bfloat16))
    assert back.dtype == torch.bfloat16
    assert torch.equal(back, torch.tensor([0.1, 0.2], dtype=torch.float32).to(torch.bfloat16))


def test_torch_bfloat16_gradients():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, -3.0], dtype=torch.bfloat16, requires_grad=True)
    x = wp.from_torch(t)
    y = wp.zeros(3, dtype=wp.bfloat16, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_bf16, 3, inputs=[x, y])
    tape.backward(grads={y: wp.array([1.0, 0.5, 2.0], dtype=wp.bfloat16)})
    assert t.grad.dtype == torch.bfloat16
    assert t.grad.float().tolist() == [3.0, 1.5, 6.0]
