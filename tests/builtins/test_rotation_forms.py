"""Transforms built in kernels in each of Warp's forms (and its errors), quat_from_matrix's
case split (finite gradients in every case, float16 included) and quat_slerp's formula."""

import importlib.util

import numpy as np
import pytest

import weft as wp


@wp.kernel
def _transforms(p: wp.vec3, q: wp.quat, out: wp.array(dtype=wp.transform)):
    out[0] = wp.transform()
    out[1] = wp.transform(p=p)  # the identity rotation
    out[2] = wp.transform(p=p, q=q)
    out[3] = wp.transform(q=q, p=p)
    out[4] = wp.transform(p, q)
    out[5] = wp.transform(p)
    out[6] = wp.transform(2.0)  # fill
    out[7] = wp.transform(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)
    out[8] = wp.transform(wp.transform(p, q))  # copy
    out[9] = wp.transformation(p=p, dtype=float)


def test_transform_constructor_forms_in_kernels():
    p, q = [1.0, 2.0, 3.0], [0.0, 0.6, 0.0, 0.8]
    out = wp.zeros(10, dtype=wp.transform)
    wp.launch(_transforms, 1, inputs=[wp.vec3(*p), wp.quat(*q), out])
    identity = [0.0, 0.0, 0.0, 1.0]
    expected = [[0.0] * 7, p + identity, p + q, p + q, p + q, p + identity, [2.0] * 7,
                [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], p + q, p + identity]
    np.testing.assert_allclose(out.numpy(), np.array(expected, dtype=np.float32))


def _compile_one(tmp_path, expression):
    path = tmp_path / "bad_transform.py"
    path.write_text(f"import weft as wp\n\n\n@wp.kernel\ndef bad():\n    t = {expression}\n")
    spec = importlib.util.spec_from_file_location("bad_transform", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wp.launch(module.bad, 1)


@pytest.mark.parametrize("expression,message", [
    ("wp.transform(1.0, 2.0)",
     r"incompatible number of values given \(2\) when constructing a transform; expected 0, 1, or 7"),
    ("wp.transform(1.0, 2.0, 3.0)", r"incompatible number of values given \(3\)"),
    ("wp.transformd(wp.transform(1.0))",
     "copy constructing a transform requires matching source and target dtypes, got `float32` and `float64`"),
    ("wp.transform(p=wp.vec3(1.0, 2.0, 3.0), r=wp.quat_identity())", "unexpected keyword 'r'"),
    ("wp.transform(p=wp.vec2(1.0, 2.0))", "p must be a vec3"),
])
def test_transform_constructor_errors(tmp_path, expression, message):
    with pytest.raises(wp.WarpCodegenError, match=message) as info:
        _compile_one(tmp_path, expression)
    assert "bad_transform.py:6" in str(info.value)


@wp.kernel
def _from_matrix(m: wp.array(dtype=wp.mat33h), out: wp.array(dtype=wp.quath)):
    i = wp.tid()
    out[i] = wp.quat_from_matrix(m[i])


def _rotation(axis, angle):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def test_quat_from_matrix_every_case_in_float16():
    # trace >= 0; and the three diagonal cases (rotations by pi about x, y, z, and near them),
    # where the other cases' square roots would be of 0 or of negative numbers
    rotations = [_rotation([1, 0, 0], np.pi / 3), _rotation([1, 0, 0], np.pi), _rotation([0, 1, 0], np.pi),
                 _rotation([0, 0, 1], np.pi), _rotation([1, 0.1, 0.2], 3.0), _rotation([0.1, 1, 0.2], 3.0),
                 _rotation([0.2, 0.1, 1], 3.0)]
    m = wp.array(np.array(rotations, dtype=np.float16), dtype=wp.mat33h, requires_grad=True)
    out = wp.zeros(len(rotations), dtype=wp.quath, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_from_matrix, len(rotations), inputs=[m], outputs=[out])
    tape.backward(grads={out: wp.array(np.ones((len(rotations), 4), np.float16), dtype=wp.quath)})
    assert np.isfinite(m.grad.numpy()).all()
    q = out.numpy().astype(np.float64)
    x, y, z, w = q.T
    back = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                     2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                     2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1)
    np.testing.assert_allclose(back.reshape(-1, 3, 3), np.array(rotations), atol=6e-3)


@wp.kernel
def _slerp(a: wp.array(dtype=wp.quatd), b: wp.array(dtype=wp.quatd), t: wp.array(dtype=wp.float64),
           out: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    out[i] = wp.quat_slerp(a[i], b[i], t[i])


def test_quat_slerp_is_the_shorter_arc():
    rng = np.random.default_rng(8)
    a = rng.normal(size=(8, 4))
    b = rng.normal(size=(8, 4))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    t = rng.uniform(size=8)
    out = wp.zeros(8, dtype=wp.quatd)
    wp.launch(_slerp, 8, inputs=[wp.array(a, dtype=wp.quatd), wp.array(b, dtype=wp.quatd),
                                 wp.array(t, dtype=wp.float64), out])
    # the textbook formula on the shorter arc (b flipped where a . b < 0)
    d = np.sum(a * b, axis=1)
    b = np.where(d[:, None] < 0, -b, b)
    theta = np.arccos(np.abs(d))[:, None]
    expected = (np.sin((1 - t[:, None]) * theta) * a + np.sin(t[:, None] * theta) * b) / np.sin(theta)
    got = out.numpy()
    sign = np.sign(np.sum(got * expected, axis=1))[:, None]  # q and -q are one rotation
    np.testing.assert_allclose(got * sign, expected, atol=1e-12)
