"""texture_sample: values against a float64 numpy reference for every dimension, channel
count, filter, address mode and coordinate convention; coordinate and LOD gradients
against float64 central differences of that reference; errors for wrong arguments."""

import gc
import itertools

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError

F = wp.TextureFilterMode
A = wp.TextureAddressMode
TEX = {1: wp.Texture1D, 2: wp.Texture2D, 3: wp.Texture3D}
DT = {1: wp.float32, 2: wp.vec2f, 4: wp.vec4f}
CT = {1: wp.float32, 2: wp.vec2f, 3: wp.vec3f}


# reference ------------------------------------------------------------------------------------
def _index(i, size, mode):
    if mode == A.WRAP:
        return i % size
    if mode == A.CLAMP:
        return min(max(i, 0), size - 1)
    if mode == A.MIRROR:
        m = i % (2 * size)
        return 2 * size - m - 1 if m >= size else m
    return i  # BORDER: outside reads zero


def _reduce(c, norm, base, mode):
    if mode in (A.WRAP, A.MIRROR):
        period = (1.0 if norm else base) * (2.0 if mode == A.MIRROR else 1.0)
        c = c % period
    return c if norm else c / base


def _axis(c, norm, base, size, mode, linear):
    """[(index, weight)] of one axis."""
    if not linear:
        t = _reduce(c, norm, base, mode) * size
        if mode not in (A.WRAP, A.MIRROR):
            t = min(max(t, -1.0), float(size))
        return [(_index(int(np.floor(t)), size, mode), 1.0)]
    t = _reduce(c, norm, base, mode) * size - 0.5
    if mode == A.CLAMP:
        t = min(max(t, 0.0), size - 1.0)
    i0 = int(np.floor(t))
    f = t - i0
    return [(_index(i0, size, mode), 1.0 - f), (_index(i0 + 1, size, mode), f)]


def _level_value(level, coords, norm, base, modes, linear):
    """float64 sample of one level (numpy array (..., channels), spatial axes reversed)."""
    ndim = len(coords)
    size = level.shape[:ndim][::-1]
    axes = [_axis(coords[a], norm, base[a], size[a], modes[a], linear) for a in range(ndim)]
    out = np.zeros(level.shape[ndim], np.float64)
    for combo in itertools.product(*axes):
        idx = tuple(i for i, _ in combo)
        w = np.prod([wt for _, wt in combo])
        if all(0 <= i < s for i, s in zip(idx, size)):
            out += w * level[idx[::-1]]
    return out


def ref_sample(levels, coords, lod, norm, modes, linear, mip_linear):
    base = levels[0].shape[:len(coords)][::-1]
    n = len(levels)

    def at(k):
        return _level_value(levels[k], coords, norm, base, modes, linear)
    if n == 1:
        return at(0)
    cl = min(max(lod, 0.0), n - 1.0)
    if not mip_linear:
        return at(min(int(np.floor(cl + 0.5)), n - 1))
    l0 = int(np.floor(cl))
    l1 = min(l0 + 1, n - 1)
    f = cl - l0
    return at(l0) if l1 == l0 else at(l0) * (1 - f) + at(l1) * f


def ref_mips(data, ndim, count):
    """The 2x box-filtered chain (float data), written independently of the runtime's."""
    out = [data.astype(np.float64)]
    for _ in range(1, count):
        cur = out[-1]
        for a in range(ndim):
            s = cur.shape[a]
            if s == 1:
                continue
            half = s // 2
            lo = np.take(cur, 2 * np.arange(half), axis=a)
            hi = np.take(cur, np.minimum(2 * np.arange(half) + 1, s - 1), axis=a)
            cur = (lo + hi) / 2
        out.append(cur.astype(np.float32).astype(np.float64))
    return out


# kernels ----------------------------------------------------------------------------------------
_KERNELS = {}


def sampler(ndim, k):
    if (ndim, k) not in _KERNELS:
        T, C, X = DT[k], CT[ndim], TEX[ndim]

        @wp.kernel
        def sample(tex: X, c: wp.array(dtype=C), lod: wp.array(dtype=float), out: wp.array(dtype=T)):
            i = wp.tid()
            out[i] = wp.texture_sample(tex, c[i], dtype=T, lod=lod[i])
        _KERNELS[(ndim, k)] = sample
    return _KERNELS[(ndim, k)]


def run(tex, coords, lods, k, seed=None):
    ndim = tex.ndim
    coords = np.asarray(coords, np.float32).reshape(len(coords), ndim)
    c = wp.array(coords[:, 0] if ndim == 1 else coords, dtype=CT[ndim], requires_grad=True)
    lod = wp.array(lods.astype(np.float32), dtype=float, requires_grad=True)
    out = wp.zeros(len(coords), dtype=DT[k], requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sampler(ndim, k), len(coords), inputs=[tex, c, lod], outputs=[out])
    values = out.numpy().reshape(len(coords), k)
    if seed is None:
        return values
    tape.backward(grads={out: wp.array(seed.astype(np.float32).reshape(out.shape + ((k,) if k > 1 else ())),
                                       dtype=DT[k])})
    return values, c.grad.numpy().reshape(len(coords), ndim), lod.grad.numpy()


def _data(rng, ndim, k, shape=(5, 4, 3)):
    spatial = shape[:ndim][::-1]  # (depth, height, width) order
    return rng.uniform(-2.0, 2.0, size=(*spatial, k)).astype(np.float32)


def _coords(rng, n, ndim, norm, size):
    c = rng.uniform(-1.3, 2.3, size=(n, ndim))
    if not norm:
        c = c * np.asarray(size[:ndim], np.float64)
    return c


def _make_tex(data, ndim, k, filt, modes, norm, levels=1, mip=F.LINEAR):
    arr = data if k > 1 else data[..., 0]
    return TEX[ndim](arr, filter_mode=filt, address_mode=tuple(modes), normalized_coords=norm,
                     num_mip_levels=levels, mip_filter_mode=mip)


# values -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("filt", [F.CLOSEST, F.LINEAR])
def test_values_match_reference_for_every_address_mode(ndim, k, filt):
    rng = np.random.default_rng(ndim * 10 + k + 100 * int(filt))
    data = _data(rng, ndim, k)
    size = (5, 4, 3)
    for mode, norm in itertools.product(list(A), [True, False]):
        modes = [mode] * ndim
        tex = _make_tex(data, ndim, k, filt, modes, norm)
        coords = _coords(rng, 40, ndim, norm, size)
        got = run(tex, coords, np.full(40, -1.0), k)
        want = np.array([ref_sample([data], tuple(p), -1.0, norm, modes, filt == F.LINEAR, True) for p in
                         coords.astype(np.float32).astype(np.float64)])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{mode!r} normalized={norm}")


def test_mixed_address_modes_per_axis():
    rng = np.random.default_rng(7)
    data = _data(rng, 3, 2)
    modes = [A.WRAP, A.MIRROR, A.BORDER]
    tex = wp.Texture3D(data, address_mode_u=A.WRAP, address_mode_v=A.MIRROR, address_mode_w=A.BORDER)
    assert (tex.address_mode_u, tex.address_mode_v, tex.address_mode_w) == tuple(modes)
    coords = _coords(rng, 60, 3, True, (5, 4, 3))
    got = run(tex, coords, np.full(60, -1.0), 2)
    want = np.array([ref_sample([data], tuple(p), -1.0, True, modes, True, True)
                     for p in coords.astype(np.float32).astype(np.float64)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_channels_the_texture_lacks_read_zero_and_extra_channels_are_ignored():
    data = np.arange(8, dtype=np.float32).reshape(4, 2)  # 2 channels
    tex = wp.Texture1D(data, filter_mode=F.CLOSEST)
    u = (np.arange(4) + 0.5) / 4
    np.testing.assert_array_equal(run(tex, u[:, None], -np.ones(4), 4), np.c_[data, np.zeros((4, 2))])
    np.testing.assert_array_equal(run(tex, u[:, None], -np.ones(4), 1)[:, 0], data[:, 0])


@pytest.mark.parametrize("np_type,scale,low", [(np.uint8, 255.0, 0.0), (np.uint16, 65535.0, 0.0),
                                                (np.int8, 127.0, -1.0), (np.int16, 32767.0, -1.0)])
def test_small_integers_read_normalized(np_type, scale, low):
    info = np.iinfo(np_type)
    data = np.array([info.min, 0, 1, info.max], dtype=np_type)
    tex = wp.Texture1D(data, filter_mode=F.CLOSEST)
    got = run(tex, ((np.arange(4) + 0.5) / 4)[:, None], -np.ones(4), 1)[:, 0]
    want = np.maximum(data.astype(np.float32) / np.float32(scale), np.float32(low))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("np_type", [np.int32, np.uint32, np.float16])
def test_wide_integers_and_halves_read_as_their_values(np_type):
    data = np.array([3, 70000 if np_type != np.float16 else 2.5, 0, 7], dtype=np_type)
    tex = wp.Texture1D(data, filter_mode=F.CLOSEST)
    got = run(tex, ((np.arange(4) + 0.5) / 4)[:, None], -np.ones(4), 1)[:, 0]
    np.testing.assert_array_equal(got, data.astype(np.float32))


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("mip", [F.CLOSEST, F.LINEAR])
@pytest.mark.parametrize("norm", [True, False])
def test_mipmapped_values_match_reference(ndim, mip, norm):
    rng = np.random.default_rng(ndim + 3 * int(mip))
    shape = (16, 8, 4)
    data = _data(rng, ndim, 2, shape)
    tex = _make_tex(data, ndim, 2, F.LINEAR, [A.WRAP] * ndim, norm, levels=0, mip=mip)
    assert tex.num_mip_levels == 5 and tex.is_mipmapped
    levels = ref_mips(data, ndim, tex.num_mip_levels)
    coords = _coords(rng, 50, ndim, norm, shape)
    lods = rng.uniform(-1.0, 5.5, 50)
    got = run(tex, coords, lods, 2)
    want = np.array([ref_sample(levels, tuple(p), lod, norm, [A.WRAP] * ndim, True, mip == F.LINEAR)
                     for p, lod in zip(coords.astype(np.float32).astype(np.float64), lods.astype(np.float32))])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# gradients --------------------------------------------------------------------------------------
def _far_from_kinks(coords, tex, lods=None, margin=2e-3):
    """Points whose texel positions (every level used) and LODs are not within `margin` of a
    cell boundary, where the derivative jumps."""
    keep = []
    base = (tex.width, tex.height, tex.depth)
    for i, p in enumerate(coords):
        ok = True
        ks = range(tex.num_mip_levels) if lods is not None else [0]
        for k in ks:
            for a in range(tex.ndim):
                size = max(1, base[a] >> k)
                c = _reduce(p[a], tex.normalized_coords, base[a], tex._address_modes[a])
                t = c * size - 0.5
                ok &= abs(t - np.round(t)) > margin * size
        if lods is not None:
            ok &= abs(lods[i] - np.round(lods[i])) > margin and lods[i] > margin
        keep.append(ok)
    return np.array(keep)


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("mode", list(A))
def test_linear_coordinate_gradients_match_central_differences(ndim, k, mode):
    rng = np.random.default_rng(ndim * 7 + k + 31 * int(mode))
    data = _data(rng, ndim, k)
    for norm in (True, False):
        tex = _make_tex(data, ndim, k, F.LINEAR, [mode] * ndim, norm)
        coords = _coords(rng, 60, ndim, norm, (5, 4, 3)).astype(np.float32).astype(np.float64)
        coords = coords[_far_from_kinks(coords, tex)]
        seed = rng.uniform(-1, 1, (len(coords), k))
        _, grad, _ = run(tex, coords, -np.ones(len(coords)), k, seed)
        h = 1e-4 * (1.0 if norm else 5.0)
        want = np.zeros_like(grad, dtype=np.float64)
        for i, p in enumerate(coords):
            for a in range(ndim):
                e = np.zeros(ndim)
                e[a] = h
                fp = ref_sample([data], tuple(p + e), -1, norm, [mode] * ndim, True, True)
                fm = ref_sample([data], tuple(p - e), -1, norm, [mode] * ndim, True, True)
                want[i, a] = seed[i] @ (fp - fm) / (2 * h)
        np.testing.assert_allclose(grad, want, rtol=1e-3, atol=1e-3, err_msg=f"normalized={norm}")
        assert np.abs(want).max() > 0.1  # the check saw real slopes


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_closest_filtering_has_zero_coordinate_gradient(ndim):
    rng = np.random.default_rng(ndim)
    data = _data(rng, ndim, 1)
    tex = _make_tex(data, ndim, 1, F.CLOSEST, [A.CLAMP] * ndim, True)
    coords = _coords(rng, 20, ndim, True, (5, 4, 3))
    _, grad, glod = run(tex, coords, -np.ones(20), 1, np.ones((20, 1)))
    assert not grad.any() and not glod.any()


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("filt", [F.CLOSEST, F.LINEAR])
def test_lod_and_coordinate_gradients_of_mipmaps_match_central_differences(ndim, filt):
    rng = np.random.default_rng(40 + ndim)
    shape = (16, 8, 8)
    data = _data(rng, ndim, 2, shape)
    modes = [A.CLAMP] * ndim
    tex = _make_tex(data, ndim, 2, filt, modes, True, levels=0, mip=F.LINEAR)
    levels = ref_mips(data, ndim, tex.num_mip_levels)
    coords = _coords(rng, 80, ndim, True, shape).astype(np.float32).astype(np.float64)
    lods = rng.uniform(0.0, tex.num_mip_levels - 1.0, 80).astype(np.float32).astype(np.float64)
    keep = _far_from_kinks(coords, tex, lods) if filt == F.LINEAR else \
        np.abs(lods - np.round(lods)) > 1e-3
    coords, lods = coords[keep], lods[keep]
    seed = rng.uniform(-1, 1, (len(coords), 2))
    _, grad, glod = run(tex, coords, lods, 2, seed)
    h = 1e-4

    def f(p, lod):
        return ref_sample(levels, tuple(p), lod, True, modes, filt == F.LINEAR, True)
    want_lod = np.array([seed[i] @ (f(p, lod + h) - f(p, lod - h)) / (2 * h)
                         for i, (p, lod) in enumerate(zip(coords, lods))])
    np.testing.assert_allclose(glod, want_lod, rtol=2e-3, atol=2e-3)
    assert np.abs(want_lod).max() > 0.05
    if filt == F.LINEAR:
        want = np.array([[seed[i] @ (f(p + h * e, lod) - f(p - h * e, lod)) / (2 * h) for e in np.eye(ndim)]
                         for i, (p, lod) in enumerate(zip(coords, lods))])
        np.testing.assert_allclose(grad, want, rtol=2e-3, atol=2e-3)
    else:
        assert not grad.any()


def test_lod_gradient_is_zero_where_the_lod_is_clamped_and_one_sided_at_integers():
    data = np.array([0.0, 4.0, 8.0, 12.0], np.float32)  # level 1: [2, 10], level 2: [6]
    tex = wp.Texture1D(data, num_mip_levels=0, filter_mode=F.CLOSEST, mip_filter_mode=F.LINEAR)
    u = np.array([[0.1], [0.1], [0.1], [0.1]])
    values, _, glod = run(tex, u, np.array([-0.5, 2.5, 0.0, 1.0]), 1, np.ones((4, 1)))
    np.testing.assert_array_equal(values[:, 0], [0.0, 6.0, 0.0, 2.0])
    # below 0 and above the last level: clamped; at 0 and 1: toward the next level
    np.testing.assert_array_equal(glod, [0.0, 0.0, 2.0, 4.0])


def test_small_slopes_on_large_offsets_keep_their_gradient():
    data = (np.float32(1.0e6) + np.arange(8, dtype=np.float32) * np.float32(0.0625)).astype(np.float32)
    tex = wp.Texture1D(data, normalized_coords=False)
    _, grad, _ = run(tex, np.array([[2.3], [5.7]]), -np.ones(2), 1, np.array([[0.3], [-0.7]]))
    np.testing.assert_allclose(grad[:, 0], [0.3 * 0.0625, -0.7 * 0.0625], rtol=1e-6)


# kernel use -------------------------------------------------------------------------------------
@wp.struct
class Holder:
    tex: wp.Texture2D
    scale: float


@wp.kernel
def from_struct(h: Holder, out: wp.array(dtype=float)):
    out[0] = wp.texture_sample(h.tex, 0.25, 0.75, dtype=float) * h.scale
    out[1] = float(h.tex.width * 100 + h.tex.height)


@wp.kernel
def from_array(texs: wp.array(dtype=wp.Texture2D), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(texs[i], wp.vec2(0.5, 0.5), dtype=float)


def test_textures_in_structs_and_arrays():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    tex = wp.Texture2D(data, filter_mode=F.CLOSEST)
    h = Holder()
    h.tex = tex
    h.scale = 2.0
    assert h.tex is tex
    out = wp.zeros(2, dtype=float)
    wp.launch(from_struct, 1, inputs=[h, out])
    np.testing.assert_array_equal(out.numpy(), [2.0 * data[2, 1], 403.0])
    arr = wp.array([wp.Texture2D(np.full((2, 2), float(i), np.float32)) for i in range(3)], dtype=wp.Texture2D)
    gc.collect()  # the array keeps its textures alive
    out = wp.zeros(3, dtype=float)
    wp.launch(from_array, 3, inputs=[arr, out])
    np.testing.assert_array_equal(out.numpy(), [0.0, 1.0, 2.0])


# errors -----------------------------------------------------------------------------------------
def _compile(tmp_path, body_src):
    import importlib.util
    path = tmp_path / "texture_kernel.py"
    path.write_text("import weft as wp\n\n\n@wp.kernel\n"
                    f"def k(tex: wp.Texture2D, out: wp.array(dtype=float)):\n    {body_src}\n")
    spec = importlib.util.spec_from_file_location("texture_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wp.launch(module.k, 1, inputs=[wp.Texture2D(np.zeros((2, 2), np.float32)), wp.zeros(1, dtype=float)])


@pytest.mark.parametrize("body,message", [
    ("out[0] = wp.texture_sample(tex, wp.vec2(0.5, 0.5), dtype=wp.vec3f)", "unsupported texture type"),
    ("out[0] = wp.texture_sample(tex, wp.vec3(0.5, 0.5, 0.5), dtype=float)", "2D texture takes a vec2f"),
    ("out[0] = wp.texture_sample(tex, 0.5, dtype=float)", "2D texture takes"),
    ("out[0] = wp.texture_sample(tex, wp.vec2(0.5, 0.5))", "needs dtype"),
    ("out[0] = wp.texture_sample(1.0, wp.vec2(0.5, 0.5), dtype=float)", "must be a wp.Texture1D"),
    ("out[0] = wp.texture_sample(tex, wp.vec2(0.5, 0.5), dtype=float, lod=1)", None),
])
def test_argument_errors_name_the_problem(tmp_path, body, message):
    if message is None:
        _compile(tmp_path, body)  # an integer constant lod is fine
        return
    with pytest.raises((CompileError, TypeError), match=message) as info:
        _compile(tmp_path, body)
    assert "texture_kernel.py" in str(info.value)  # the error says where


@wp.kernel
def spellings(t2: wp.Texture2D, t3: wp.Texture3D, out: wp.array(dtype=float)):
    out[0] = wp.texture_sample(t2, wp.vec2(0.3, 0.6), dtype=float, lod=0.5)
    out[1] = wp.texture_sample(t2, 0.3, 0.6, dtype=float, lod=0.5)
    out[2] = wp.texture_sample(tex=t2, uv=wp.vec2(0.3, 0.6), dtype=float, lod=0.5)
    out[3] = wp.texture_sample(t2, 0.3, 0.6, float, 0.5)
    out[4] = wp.texture_sample(t3, wp.vec3(0.3, 0.6, 0.2), dtype=float)
    out[5] = wp.texture_sample(t3, 0.3, 0.6, 0.2, dtype=float)


def test_positional_keyword_and_scalar_coordinate_spellings_agree():
    rng = np.random.default_rng(3)
    t2 = wp.Texture2D(rng.uniform(size=(8, 8)).astype(np.float32), num_mip_levels=0)
    t3 = wp.Texture3D(rng.uniform(size=(3, 4, 5)).astype(np.float32))
    out = wp.zeros(6, dtype=float)
    wp.launch(spellings, 1, inputs=[t2, t3, out])
    r = out.numpy()
    assert r[0] != 0.0 and r[4] != 0.0
    np.testing.assert_array_equal(r[:4], r[0])
    np.testing.assert_array_equal(r[4:], r[4])
