"""Kernels whose float64 `+` and `-` are redefined by @funcs of this module (Warp's operator
dispatch: only kernels defined here see them), for test_warp_differences.py."""

import weft as wp


@wp.func
def add(x: wp.float64, y: wp.float64) -> wp.float64:
    return wp.sub(x, y)


@wp.func
def sub(x: wp.float64, y: wp.float64) -> wp.float64:
    return wp.mul(x, y)


@wp.kernel
def slot_add(values: wp.array(dtype=wp.vec3d), rhs: wp.array(dtype=wp.float64)):
    i = wp.tid()
    values[i].x += rhs[i]  # the redefined add: x - rhs


@wp.kernel
def slot_sub(values: wp.array(dtype=wp.vec3d), rhs: wp.array(dtype=wp.float64)):
    i = wp.tid()
    values[i][1] -= rhs[i]  # the redefined sub: y * rhs (the adjoint needs the old y)


@wp.func
def update_component(values: wp.array(dtype=wp.vec3d), rhs: wp.array(dtype=wp.float64), i: int):
    values[i].z += rhs[i]


@wp.kernel
def slot_add_in_func(values: wp.array(dtype=wp.vec3d), rhs: wp.array(dtype=wp.float64)):
    update_component(values, rhs, wp.tid())
