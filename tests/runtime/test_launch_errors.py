"""Launch validation: every bad argument is a TypeError or ValueError that names the kernel,
the parameter, what was expected and what was received, raised before any thread runs."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def target(a: wp.array(dtype=float), n: int, x: float, v: wp.vec3, u: wp.uint8, m: wp.mat22,
           grid: wp.array2d(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] + float(n) + x + v[0] + float(u) + m[0, 0] + grid[0, 0][0]


NAMES = ["a", "n", "x", "v", "u", "m", "grid", "out"]


def good_args():
    return [wp.ones(4), 1, 2.0, wp.vec3(1, 2, 3), 3, wp.mat22(1, 0, 0, 1), wp.zeros((2, 2), dtype=wp.vec3),
            wp.full(4, -1.0)]


def test_good_arguments_run():
    args = good_args()
    wp.launch(target, 4, inputs=args)
    assert args[-1].numpy().tolist() == [9.0] * 4


# parameter, bad value, exception, (expected, received) fragments of the message
CASES = [
    ("a", 1.0, TypeError, ("expects an array of type array(ndim=1, dtype=float32)", "has type float: 1.0")),
    ("a", np.zeros(4, np.float64), TypeError, ("a weft array of float32", "ndarray")),
    ("a", [1.0, 2.0, 3.0, 4.0], TypeError, ("expects an array of type array(ndim=1, dtype=float32)",
                                             "has type list: [1.0, 2.0, 3.0, 4.0]")),
    ("a", wp.zeros(4, dtype=wp.float64), TypeError,
     ("an array of float32 with 1 dimension(s)", "an array of float64 with 1 dimension(s)")),
    ("a", wp.zeros((4, 1)), TypeError,
     ("an array of float32 with 1 dimension(s)", "an array of float32 with 2 dimension(s)")),
    ("a", wp.zeros(4, dtype=wp.vec3), TypeError, ("an array of float32", "an array of vec3f")),
    ("n", wp.zeros(4), TypeError, ("a number (int32)", "an array of float32")),
    ("n", 1.5, TypeError, ("an integer (int32)", "float 1.5")),
    ("n", np.float32(1.0), TypeError, ("an integer (int32)", "float32 1.0")),
    ("n", "3", TypeError, ("a number (int32)", "str '3'")),
    ("n", None, TypeError, ("a number (int32)", "NoneType None")),
    ("n", 2**31, ValueError, ("an integer in the range of int32", "2147483648")),
    ("n", -(2**31) - 1, ValueError, ("an integer in the range of int32", "-2147483649")),
    ("n", np.int64(2**40), ValueError, ("an integer in the range of int32", str(2**40))),
    ("x", "2.0", TypeError, ("a number (float32)", "str '2.0'")),
    ("x", 1 + 2j, TypeError, ("a real number (float32)", "complex")),
    ("x", wp.ones(1), TypeError, ("a number (float32)", "an array of float32")),
    ("x", wp.vec3(1, 2, 3), TypeError, ("a number (float32)", "a vec3f")),
    ("x", 10**400, ValueError, ("a number in the range of float32", "10000000")),
    ("v", wp.vec2(1, 2), TypeError, ("vec3f", "a vec2f")),
    ("v", wp.vec4d(1, 2, 3, 4), TypeError, ("vec3f", "a vec4d")),
    ("v", wp.mat33(), TypeError, ("vec3f", "a mat33f")),
    ("v", (1.0, 2.0), TypeError, ("vec3f (3 components)", "tuple (1.0, 2.0) (2 values)")),
    ("v", [1, 2, 3, 4], TypeError, ("vec3f (3 components)", "list [1, 2, 3, 4] (4 values)")),
    ("v", ("1", "2", "3"), TypeError, ("vec3f", "components must be numbers")),

    ("v", "abc", TypeError, ("vec3f", "str 'abc'")),
    ("v", wp.ones(3), TypeError, ("vec3f", "an array of float32")),
    ("u", 256, ValueError, ("an integer in the range of uint8", "256")),
    ("u", -129, ValueError, ("an integer in the range of uint8", "-129")),
    ("m", wp.mat33(), TypeError, ("mat22f", "a mat33f")),
    ("m", [[1, 2, 3], [4, 5, 6]], TypeError, ("mat22f (4 components)", "(6 values)")),
    ("grid", wp.zeros((2, 2)), TypeError,
     ("an array of vec3f with 2 dimension(s)", "an array of float32 with 2 dimension(s)")),
    ("grid", wp.zeros(4, dtype=wp.vec3), TypeError,
     ("an array of vec3f with 2 dimension(s)", "an array of vec3f with 1 dimension(s)")),
    ("out", wp.zeros(4, dtype=wp.float64), TypeError, ("an array of float32", "an array of float64")),
]


@pytest.mark.parametrize("name, bad, exc, fragments", CASES,
                         ids=[f"{c[0]}-{type(c[1]).__name__}-{k}" for k, c in enumerate(CASES)])
def test_bad_argument(name, bad, exc, fragments):
    args = good_args()
    out = args[-1]
    args[NAMES.index(name)] = bad
    with pytest.raises(exc) as e:
        wp.launch(target, 4, inputs=args)
    # a wrong kind of argument is a TypeError, and the RuntimeError Warp raises; a value out
    # of range a ValueError only
    assert isinstance(e.value, TypeError) is isinstance(e.value, RuntimeError) is (exc is TypeError)
    msg = str(e.value)
    assert msg.startswith((f"kernel 'target', argument '{name}': expected ",
                           f"kernel 'target', argument '{name}' expects ")), msg
    for fragment in fragments:
        assert fragment in msg, msg
    if name != "out":
        assert (out.numpy() == -1).all()  # no thread ran


THROUGH_OUTPUTS = CASES[:6] + [c for c in CASES if c[0] == "v"]


@pytest.mark.parametrize("name, bad, exc, fragments", THROUGH_OUTPUTS,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(THROUGH_OUTPUTS)])
def test_bad_argument_given_through_outputs(name, bad, exc, fragments):
    args = good_args()
    args[NAMES.index(name)] = bad
    with pytest.raises(exc, match=f"kernel 'target', argument '{name}'"):
        wp.launch(target, 4, inputs=args[:3], outputs=args[3:])


@wp.kernel
def int_vectors(v: wp.vec3i, u: wp.vec(2, wp.uint8), out: wp.array(dtype=int)):
    out[0] = v[0] + v[1] + v[2] + int(u[0]) + int(u[1])


def test_single_values_and_none_for_composites_are_refused_as_warp_does():
    """One number is not broadcast to a vector (Warp refuses or deprecates it); None is not
    converted. The errors are also the RuntimeError / ValueError that Warp raises."""
    args = good_args()
    for bad, exc, fragment in [(1.0, RuntimeError, "expects vec3f but got a single value of type float"),
                               (wp.float32(1.0), TypeError, "a single value of type float32"),
                               (None, ValueError, "Failed to convert argument for param v to vec3f")]:
        args[NAMES.index("v")] = bad
        with pytest.raises(exc, match=f"kernel 'target', argument 'v' {'.*' if bad is None else ''}"):
            wp.launch(target, 4, inputs=args)
        with pytest.raises(TypeError, match=fragment):
            wp.launch(target, 4, inputs=args)


@wp.kernel
def numbers_and_flags(n: int, x: float, flag: wp.bool, out: wp.array(dtype=float)):
    out[0] = float(n) + x
    if flag:
        out[0] = -out[0]


def test_bools_are_numbers_and_numbers_bools_as_in_warps_packing():
    out = wp.zeros(1)
    wp.launch(numbers_and_flags, 1, inputs=[True, np.bool_(True), 0, out])
    assert out.numpy()[0] == 2.0
    wp.launch(numbers_and_flags, 1, inputs=[2, False, 1, out])
    assert out.numpy()[0] == -2.0
    with pytest.raises(TypeError, match="argument 'flag': expected a bool"):
        wp.launch(numbers_and_flags, 1, inputs=[2, 0.5, "yes", out])


def test_a_vector_or_matrix_of_another_scalar_type_converts():
    """As Warp's launch, which builds the parameter's type from the value: a vec3d or vec3i
    is a vec3f argument; fractions for integer components are still refused."""
    out = wp.zeros(1, dtype=int)
    wp.launch(int_vectors, 1, inputs=[wp.vec3d(1, 2, 3), wp.vec(2, wp.int64)(4, 5), out])
    assert out.numpy()[0] == 15
    with pytest.raises(TypeError, match="argument 'v': expected vec3i, got a vec3d .*fractions"):
        wp.launch(int_vectors, 1, inputs=[wp.vec3d(1.5, 2, 3), (4, 5), out])


def test_integer_vector_components_are_checked():
    out = wp.zeros(1, dtype=int)
    for v, u in [((1, 2, 3), (4, 5)), ((1.0, 2.0, 3.0), [4.0, 5]), (np.array([1, 2, 3]), np.array([4, 5], np.uint64))]:
        out.zero_()
        wp.launch(int_vectors, 1, inputs=[v, u, out])  # exact values convert
        assert out.numpy()[0] == 15
    with pytest.raises(TypeError) as e:
        wp.launch(int_vectors, 1, inputs=[(1.5, 2, 3), (4, 5), out])
    assert str(e.value).startswith("kernel 'int_vectors', argument 'v': expected vec3i, got tuple (1.5, 2, 3)")
    assert "int32 components cannot hold the fractions" in str(e.value)
    for bad in [(256, 0), (-1, 0)]:
        with pytest.raises(ValueError) as e:
            wp.launch(int_vectors, 1, inputs=[(1, 2, 3), bad, out])
        assert str(e.value).startswith(f"kernel 'int_vectors', argument 'u': expected vec2ub, "
                                       f"got tuple {bad!r}")
        assert "out of the range of uint8" in str(e.value)
    assert out.numpy()[0] == 15


def test_last_argument_bad_after_a_good_launch_runs_nothing():
    """Earlier arguments are packed before a later one fails; the launch still must not run."""
    args = good_args()
    wp.launch(target, 4, inputs=args)
    out = args[-1]
    out.fill_(-1.0)
    args[1] = 5
    args[-2] = wp.zeros(3)
    with pytest.raises(TypeError, match="argument 'grid'"):
        wp.launch(target, 4, inputs=args)
    assert (out.numpy() == -1).all()
    args[-2] = wp.zeros((2, 2), dtype=wp.vec3)
    wp.launch(target, 4, inputs=args)  # and the next good launch uses the new values
    assert out.numpy().tolist() == [13.0] * 4


@pytest.mark.parametrize("count", [0, 7, 9])
def test_wrong_number_of_arguments(count):
    args = (good_args() * 2)[:count]
    with pytest.raises(TypeError) as e:
        wp.launch(target, 4, inputs=args)
    assert str(e.value) == (f"kernel 'target' takes 8 arguments (a, n, x, v, u, m, grid, out), "
                            f"got {count}")
    assert isinstance(e.value, RuntimeError)  # what Warp raises


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1"])
def test_cuda_device_is_a_clear_value_error(device):
    args = good_args()
    with pytest.raises(ValueError) as e:
        wp.launch(target, 4, inputs=args, device=device)
    msg = str(e.value)
    assert "kernel 'target'" in msg and repr(device) in msg and "CUDA" in msg and "cpu" in msg
    assert (args[-1].numpy() == -1).all()


def test_unknown_device():
    with pytest.raises(ValueError, match="kernel 'target': unknown device 'tpu'"):
        wp.launch(target, 4, inputs=good_args(), device="tpu")


@pytest.mark.parametrize("dim", [-1, 2.5, "4", None, (2, -1), (1, 2, 3, 4, 5), (), (2.0, 2), [[4]]])
def test_bad_dim(dim):
    with pytest.raises(ValueError) as e:
        wp.launch(target, dim, inputs=good_args())
    assert str(e.value).startswith("kernel 'target': dim must be a non-negative int or a tuple of 1 to 4")
    assert repr(dim) in str(e.value)


@pytest.mark.parametrize("dim", [2.5, "4", None, (4.0,), [[4]]])
def test_dim_of_the_wrong_type_is_also_a_type_error(dim):
    with pytest.raises(TypeError, match="dim must be"):  # Warp's class for these
        wp.launch(target, dim, inputs=good_args())


def test_a_bool_dim_counts_as_an_int():  # Warp's rule: dim=True is one thread
    args = good_args()
    wp.launch(target, True, inputs=args)
    assert (args[-1].numpy() != -1).sum() == 1


def test_too_many_threads():
    with pytest.raises(ValueError, match="kernel 'target': 4294967296 threads exceed the limit"):
        wp.launch(target, (2**16, 2**16), inputs=good_args())


@wp.kernel
def vec_and_mat(v: wp.vec3, m: wp.mat22, out: wp.array(dtype=float)):
    out[0] = v[0] + v[1] + v[2] + m[0, 0] + m[0, 1] + m[1, 0] + m[1, 1]


def test_a_bool_or_numpy_number_fills_a_composite_with_warps_deprecation_warning():
    # (a Python number or one of weft's own scalars is refused: see above)
    import contextlib
    import io

    from weft import logger
    for value in (True, np.bool_(True), wp.bool(True), np.float32(1.5), np.int64(3)):
        logger._warnings_seen.clear()
        out = wp.zeros(1)
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            wp.launch(vec_and_mat, 1, inputs=[value, value, out])
        assert out.numpy()[0] == 7 * float(value)
        text = stderr.getvalue()
        for param, type_name in (("v", "vec3f"), ("m", "mat22f")):
            assert (f"Implicit conversion from a value of type `{type(value).__name__}` to the composite type "
                    f"`{type_name}` for kernel parameter '{param}' is deprecated") in text


@wp.kernel
def flagged(flag: bool, out: wp.array(dtype=int)):
    out[0] = wp.where(flag, 1, 2)


def test_an_integer_is_a_bool_parameters_truth_value_as_in_warp():
    out = wp.zeros(1, dtype=int)
    for value, expected in ((1, 1), (0, 2), (np.int32(7), 1), (np.uint8(0), 2), (True, 1), (np.bool_(False), 2)):
        wp.launch(flagged, 1, inputs=[value, out])
        assert out.numpy()[0] == expected, value
    for bad in (0.5, "yes", None, wp.vec2(1.0, 0.0)):
        with pytest.raises(TypeError, match="kernel 'flagged', argument 'flag': expected a bool"):
            wp.launch(flagged, 1, inputs=[bad, out])
