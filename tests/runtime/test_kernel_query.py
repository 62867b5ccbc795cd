"""Kernel resource queries (get_cuda_kernel_properties, get_suggested_block_size,
get_cuda_max_cluster_dim) and CUDA-only entry points, as a CPU-only Warp answers them."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.kernel(enable_backward=False)
def fill_tid(out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = float(i)


@wp.kernel(enable_backward=False)
def copy_any(out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = out[i]


@wp.struct
class Params:
    value: wp.float32


@wp.kernel(enable_backward=False, entry_point_abi="external_constant_params", module="unique")
def external_params(params: Params):
    v = params.value  # noqa: F841


def test_cuda_kernel_properties_need_a_cuda_device():
    with pytest.raises(RuntimeError, match="requires a CUDA device, got 'cpu'"):
        wp.get_cuda_kernel_properties(fill_tid, device="cpu")
    with pytest.raises(RuntimeError, match="requires a CUDA device"):
        wp.get_cuda_kernel_properties(fill_tid)
    with pytest.raises(RuntimeError, match="requires a concrete overload.*wp.overload"):
        wp.get_cuda_kernel_properties(copy_any)
    for not_a_kernel in (lambda: None, "fill_tid"):
        with pytest.raises(TypeError, match="expected a wp.Kernel"):
            wp.get_cuda_kernel_properties(not_a_kernel)


def test_cpu_block_and_cluster_sizes_are_one():
    assert wp.get_suggested_block_size(fill_tid) == (1, 1)
    assert wp.get_suggested_block_size(copy_any, "cpu") == (1, 1)  # (the CPU answers before genericity)
    with pytest.raises(TypeError, match="expected a wp.Kernel"):
        wp.get_suggested_block_size(print)
    assert wp.get_cuda_max_cluster_dim(fill_tid) == 1
    assert wp.get_cuda_max_cluster_dim(fill_tid, "cpu", block_dim=64, dynamic_smem_bytes=128) == 1


def test_external_constant_params_entry_point_is_refused_when_compiled():
    # declaring it is fine (as in Warp); the CPU backend refuses to build it
    assert external_params.options["entry_point_abi"] == "external_constant_params"
    with pytest.raises(wp.CompileError, match="entry_point_abi='external_constant_params'.*CPU backend"):
        wp.launch(external_params, 1, inputs=[Params()])
    with pytest.raises(ValueError, match="enable_backward=False"):
        wp.kernel(entry_point_abi="external_constant_params")(lambda params: None)
    with pytest.raises(ValueError, match="entry_point_abi must be"):
        wp.kernel(entry_point_abi="cuda", enable_backward=False)(lambda params: None)
    # other kernels launch as before
    out = wp.zeros(4)
    wp.launch(fill_tid, 4, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.arange(4))
