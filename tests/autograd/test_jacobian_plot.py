"""`weft.autograd.jacobian_plot`: titles and axis names as Warp's ("<name> kernel
Jacobian"), the grid's proportions from the Jacobians and the inputs' dtypes, and clear
ValueErrors where what is plotted cannot be named."""

from typing import Any

import numpy as np
import pytest

import weft as wp
from weft.autograd import FunctionMetadata, gradcheck, jacobian, jacobian_plot

from .kernels import f64, sin_times_x, two_launch_chain, zeros

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@wp.kernel
def vec_mix(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    out[i] = wp.vec2d(a[i] * b[i][0], b[i][1] - b[i][2])


def test_kernel_title_labels_and_grid():
    a, b = f64([1.0, 2.0]), wp.array(np.arange(6.0).reshape(2, 3), dtype=wp.vec3d, requires_grad=True)
    out = wp.zeros(2, dtype=wp.vec2d, requires_grad=True)
    J = jacobian(vec_mix, 2, [a, b], [out])
    fig = jacobian_plot(J, vec_mix, [a, b], show_plot=False, show_colorbar=False)
    assert fig.get_suptitle() == "vec_mix kernel Jacobian"
    ax_a, ax_b = fig.axes
    assert (ax_a.get_xlabel(), ax_a.get_ylabel()) == ("a", "out")
    assert (ax_b.get_xlabel(), ax_b.get_ylabel()) == ("b", "")  # the row is named once, on the left
    # columns as wide as the inputs' scalars (2 floats; 2 vec3d = 6), the row as the output's (2 vec2d = 4)
    assert ax_a.get_gridspec().get_width_ratios() == [2, 6]
    assert ax_a.get_gridspec().get_height_ratios() == [4]
    # what is drawn is the Jacobian: d out[0][0] / d b[0][0] = a[0] = 1
    np.testing.assert_allclose(ax_b.get_images()[0].get_array()[0, 0], 1.0)


def test_function_title_and_names():
    x = f64([0.1, 0.2])
    J = jacobian(two_launch_chain, inputs=[x])
    fig = jacobian_plot(J, two_launch_chain, [x], show_plot=False)
    assert fig.get_suptitle() == "two_launch_chain kernel Jacobian"
    assert [ax.get_ylabel() for ax in fig.axes[:2]] == ["output_0", "output_1"]
    assert fig.axes[1].get_xlabel() == "x"


def test_jacobian_and_gradcheck_plots_are_titled_as_warp():
    x = f64([0.1, 0.2, 0.3])
    jacobian(sin_times_x, 3, [x], [zeros(3)], plot_jacobians=True)
    assert plt.gcf().get_suptitle() == "sin_times_x kernel Jacobian"
    plt.close("all")
    assert gradcheck(sin_times_x, 3, [x], [zeros(3)], plot_relative_error=True, plot_absolute_error=True,
                     show_summary=False)
    assert [plt.figure(n).get_suptitle() for n in plt.get_fignums()] == [
        "sin_times_x kernel Jacobian relative error", "sin_times_x kernel Jacobian absolute error"]


def test_metadata_names_the_plot():
    J = {(0, 0): wp.array([[1.0, 2.0]], dtype=wp.float32)}
    meta = FunctionMetadata(key="mine", input_labels=["p"], output_labels=["q"], input_strides=[None],
                            output_strides=[None], input_dtypes=[wp.float32], output_dtypes=[wp.float32])
    fig = jacobian_plot(J, meta, show_plot=False)
    assert fig.get_suptitle() == "mine kernel Jacobian"
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("p", "q")
    meta.key = None
    assert jacobian_plot(J, meta, show_plot=False).get_suptitle() == "unknown kernel Jacobian"
    # jacobian(metadata=...) plots under those names
    x = f64([0.5])
    meta = FunctionMetadata("renamed", ["u"], ["v"], [None], [None], [wp.float64], [wp.float64])
    jacobian(sin_times_x, 1, [x], [zeros(1)], plot_jacobians=True, metadata=meta)
    assert plt.gcf().get_suptitle() == "renamed kernel Jacobian"


def test_nothing_to_plot():
    assert jacobian_plot({}, FunctionMetadata(), show_plot=False) is None


def test_kernel_needs_its_inputs():
    with pytest.raises(ValueError, match="inputs must be provided.*sin_times_x"):
        jacobian_plot({}, sin_times_x)


def _meta(**changes):
    fields = dict(key="k", input_labels=["a"], output_labels=["y"], input_strides=[None], output_strides=[None],
                  input_dtypes=[wp.float32], output_dtypes=[wp.float32])
    fields.update(changes)
    return FunctionMetadata(**fields)


@pytest.mark.parametrize("changes, message", [
    (dict(input_labels=[]), "Jacobian input index 0: plotting metadata defines 0 inputs"),
    (dict(input_labels=[None]), "Jacobian input index 0: missing label"),
    (dict(input_dtypes=[None]), "input index 0 \\('a'\\): missing array dtype"),
    (dict(input_dtypes=[Any]), "has no component count"),
    (dict(output_labels=[]), "Jacobian output index 0: plotting metadata defines 0 outputs"),
    (dict(output_labels=[None]), "Jacobian output index 0: missing label"),
])
def test_incomplete_metadata_is_rejected(changes, message):
    J = {(0, 0): wp.array([[1.0]], dtype=wp.float32)}
    with pytest.raises(ValueError, match=message):
        jacobian_plot(J, _meta(**changes), show_plot=False)
    assert not plt.get_fignums()  # refused before any figure is made


def test_not_a_kernel():
    with pytest.raises(TypeError, match="FunctionMetadata"):
        jacobian_plot({}, 42)


def test_an_empty_metadata_given_to_jacobian_is_filled():
    # (as Warp does: the caller can then plot with it, or read the names)
    a, b = f64([1.0, 2.0]), wp.array(np.ones((2, 3)), dtype=wp.vec3d, requires_grad=True)
    out = wp.zeros(2, dtype=wp.vec2d, requires_grad=True)
    meta = FunctionMetadata()
    J = jacobian(vec_mix, 2, [a, b], [out], metadata=meta)
    assert (meta.key, meta.input_labels, meta.output_labels) == ("vec_mix", ["a", "b"], ["out"])
    assert meta.input_dtypes == [wp.float64, wp.vec3d] and meta.output_dtypes == [wp.vec2d]
    assert jacobian_plot(J, meta, show_plot=False).get_suptitle() == "vec_mix kernel Jacobian"
    meta = FunctionMetadata()
    jacobian(two_launch_chain, inputs=[a], metadata=meta)
    assert (meta.key, meta.input_labels, meta.output_labels) == ("two_launch_chain", ["x"], ["output_0", "output_1"])
