"""poisson, sample_cdf and randu(state, low, high): Warp's streams bit for bit, the
distributions' moments, and states passed as array elements, struct fields or temporaries
(advanced in a copy)."""

import numpy as np
import pytest

import weft as wp
from weft.builtins.random import pcg_numpy

LAMS = np.array([0.0, 0.5, 3.0, 9.5, 10.0, 42.0, 1000.0], np.float32)
CDF = np.array([0.1, 0.15, 0.5, 0.9, 1.0], np.float32)
# Produced with warp-lang 1.19.0 on the CPU: the kernel `draws` below run by `import warp
# as wp` with seed 7 on LAMS and CDF. Per thread: a poisson count per rate, then
# sample_cdf, randu(s, 10, 1000), and the state left at the end.
RECORDED = np.array([
    [0, 1, 2, 13, 5, 46, 986, 3, 184, 4203700554],
    [0, 1, 2, 10, 6, 43, 1034, 1, 102, 2386016912],
    [0, 0, 4, 7, 12, 46, 1022, 3, 821, 1573739461]], dtype=np.uint32)


@wp.kernel
def draws(seed: int, lams: wp.array(dtype=float), cdf: wp.array(dtype=float), out: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    for j in range(lams.shape[0]):
        out[i, j] = wp.poisson(s, lams[j])
    out[i, lams.shape[0]] = wp.uint32(wp.sample_cdf(s, cdf))
    out[i, lams.shape[0] + 1] = wp.randu(s, wp.uint32(10), wp.uint32(1000))
    out[i, lams.shape[0] + 2] = s


def test_streams_are_warps():
    out = wp.zeros((3, len(LAMS) + 3), dtype=wp.uint32)
    wp.launch(draws, 3, inputs=[7, wp.array(LAMS), wp.array(CDF), out])
    np.testing.assert_array_equal(out.numpy(), RECORDED)


@wp.kernel
def poisson_many(seed: int, lam: float, out: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    out[i] = wp.poisson(s, lam)


@pytest.mark.parametrize("lam", [0.7, 4.0, 10.0, 11.0, 75.0])
def test_poisson_moments(lam):
    n = 200_000
    out = wp.zeros(n, dtype=wp.uint32)
    wp.launch(poisson_many, n, inputs=[3, lam, out])
    x = out.numpy().astype(np.float64)
    se = np.sqrt(lam / n)
    assert abs(x.mean() - lam) < 6 * se
    assert abs(x.var() - lam) < 0.05 * lam + 6 * np.sqrt(2 * lam * lam / n)
    # no spurious zeros from negative candidates just above the switch to rejection
    assert np.count_nonzero(x == 0) <= n * np.exp(-lam) + 6 * np.sqrt(n * np.exp(-lam)) + 1


@wp.kernel
def cdf_many(seed: int, cdf: wp.array(dtype=float), out: wp.array(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    out[i] = wp.sample_cdf(s, cdf)


def test_sample_cdf_is_the_lower_bound_of_the_first_draw():
    n = 5000
    out = wp.zeros(n, dtype=int)
    wp.launch(cdf_many, n, inputs=[5, wp.array(CDF), out])
    for i in range(0, n, 37):  # the first uniform of rand_init(5, i), then a lower bound
        state = pcg_numpy((5 + pcg_numpy(i)) & 0xFFFFFFFF)
        u = np.float32(pcg_numpy(state) >> 8) * np.float32(1.0 / 16777216.0)
        assert out.numpy()[i] == min(int(np.searchsorted(CDF, u, side="left")), len(CDF) - 1)
    freq = np.bincount(out.numpy(), minlength=len(CDF)) / n
    np.testing.assert_allclose(freq, np.diff(CDF, prepend=0.0), atol=0.03)


@wp.kernel
def from_temporaries(seed: int, out: wp.array(dtype=float), again: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.randf(wp.rand_init(seed, i))
    s = wp.rand_init(seed, i)
    again[i] = wp.randf(s)


def test_state_given_as_a_temporary_draws_from_it():
    """`randf(rand_init(seed, i))` (a state no variable holds) draws as Warp does: from a
    copy that is dropped after the call."""
    out, again = wp.zeros(5, dtype=float), wp.zeros(5, dtype=float)
    wp.launch(from_temporaries, 5, inputs=[7, out, again])
    np.testing.assert_array_equal(out.numpy(), again.numpy())
    assert len(set(out.numpy().tolist())) == 5


@wp.kernel
def from_elements(states: wp.array(dtype=wp.uint32), out: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    out[i] = wp.poisson(states[i], 20.0) + wp.randu(states[i])


def test_state_from_an_array_element_is_a_copy():
    states = wp.array(np.array([962669792, 1029222154, 1536123189], np.uint32))
    out = wp.zeros(3, dtype=wp.uint32)
    wp.launch(from_elements, 3, inputs=[states, out])
    np.testing.assert_array_equal(states.numpy(), [962669792, 1029222154, 1536123189])
    # the second draw starts again from the element: randu gives the state's first hash
    counts = out.numpy() - np.array([pcg_numpy(int(s)) for s in states.numpy()], np.uint32)
    assert np.all((counts > 0) & (counts < 60))


@wp.struct
class Walker:
    rng: wp.uint32
    pos: float


@wp.kernel
def from_fields(walkers: wp.array(dtype=Walker), out: wp.array2d(dtype=float)):
    i = wp.tid()
    w = walkers[i]
    out[i, 0] = wp.randf(w.rng)
    out[i, 1] = wp.randf(w.rng)  # the same draw: a struct field is advanced in a copy
    out[i, 2] = wp.randf(walkers[i].rng)
    out[i, 3] = wp.sample_unit_sphere(w.rng)[0]
    out[i, 4] = wp.sample_unit_sphere(w.rng)[0]
    out[i, 5] = wp.sample_unit_square(walkers[i].rng)[1]
    s = w.rng
    out[i, 6] = wp.sample_unit_sphere(s)[0]  # a local variable is advanced in place
    out[i, 7] = wp.sample_unit_sphere(s)[0]
    walkers[i] = w


def test_state_from_a_struct_field_is_a_copy():
    walkers = wp.array([Walker(rng=wp.uint32(s), pos=0.0) for s in (7, 1007, 2007)], dtype=Walker)
    out = wp.zeros((3, 8), dtype=float)
    wp.launch(from_fields, 3, inputs=[walkers, out])
    np.testing.assert_array_equal(walkers.numpy()["rng"], [7, 1007, 2007])
    o = out.numpy()
    for i, s in enumerate((7, 1007, 2007)):
        u = np.float32(pcg_numpy(s) >> 8) * np.float32(1.0 / 16777216.0)
        assert o[i, 0] == o[i, 1] == o[i, 2] == u
    np.testing.assert_array_equal(o[:, 3], o[:, 4])
    np.testing.assert_array_equal(o[:, 3], o[:, 6])
    assert np.all(o[:, 6] != o[:, 7])


@wp.kernel
def bad_rate_type(out: wp.array(dtype=wp.uint32)):
    s = wp.rand_init(1)
    out[0] = wp.poisson(s, wp.vec2(1.0, 2.0))


@wp.kernel
def bad_cdf(cdf: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.uint32)):
    s = wp.rand_init(1)
    out[0] = wp.uint32(wp.sample_cdf(s, cdf))


def test_bad_arguments_are_compile_errors():
    with pytest.raises(wp.CompileError, match="poisson"):
        wp.launch(bad_rate_type, 1, inputs=[wp.zeros(1, dtype=wp.uint32)])
    with pytest.raises(wp.CompileError, match="1-D array of float32"):
        wp.launch(bad_cdf, 1, inputs=[wp.zeros(3, dtype=wp.float64), wp.zeros(1, dtype=wp.uint32)])


@wp.kernel
def draws_until(seed: int, threshold: float, out: wp.array(dtype=int)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    n = 0
    while wp.randf(s) < threshold:  # the test draws: each evaluation advances the state
        n += 1
    out[i] = n


def test_a_draw_in_a_while_test_advances_the_state():
    out = wp.zeros(64, dtype=int)
    wp.launch(draws_until, 64, inputs=[2, 0.8, out])
    for i in range(64):
        state, n = pcg_numpy((2 + pcg_numpy(i)) & 0xFFFFFFFF), 0
        while True:
            state = pcg_numpy(state)
            if not np.float32(state >> 8) * np.float32(1.0 / 16777216.0) < np.float32(0.8):
                break
            n += 1
        assert out.numpy()[i] == n
