"""Loops and funcs together: a runtime-signed range step, returns from inside nested loops in
a func, generic funcs using type(x)(...) casts, funcs with a return annotation, funcs writing
into an array (a row view of a 2D array), while/for/break nesting, reassigning the loop
variable inside the body, float16 math and integer matrices."""

from typing import Any

import numpy as np
import warp as wp

mat22i = wp.types.matrix(shape=(2, 2), dtype=int)

@wp.func
def twice(x: Any):
    return x * type(x)(2)

@wp.func
def first_hit(grid: wp.array2d(dtype=int), target: int):
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            if grid[r, c] == target:
                return wp.vec2i(r, c)
    return wp.vec2i(-1, -1)

@wp.func
def scale(v: wp.vec3, s: float) -> wp.vec3:
    return v * s

@wp.func
def write_into(a: wp.array(dtype=float), i: int, v: float):
    a[i] = v * 2.0

@wp.kernel
def k(ns: wp.array(dtype=int), grid: wp.array2d(dtype=int), out: wp.array(dtype=int, ndim=2),
      fo: wp.array(dtype=float, ndim=2), h: wp.array(dtype=wp.float16)):
    i = wp.tid()
    n = ns[i]
    step = 1
    if n < 0:
        step = -1
    s = int(0)
    for j in range(0, n, step):
        s += j
    out[i, 0] = s
    hit = first_hit(grid, n)
    out[i, 1] = hit[0] * 10 + hit[1]
    out[i, 2] = twice(n)
    fo[i, 0] = twice(float(n) * 0.25)
    fo[i, 1] = scale(wp.vec3(1.0, 2.0, 3.0), float(n))[1]
    v = wp.vec2(1.0, float(twice(wp.float16(float(n)))))
    fo[i, 2] = v[1]
    c = int(0)
    while c < 10:
        c += 1
        for q in range(5):
            if q * c > 12:
                break
            s += q
        if s > 40:
            break
    out[i, 3] = c * 1000 + s
    for j in range(3):
        j = j * 2
        s += j
    out[i, 4] = s
    hf = wp.float16(float(n) * 0.3)
    h[i] = wp.sin(hf) + hf * hf
    write_into(fo[i], 3, float(n))
    m = mat22i(n, 1, 2, 3)
    mm = m @ m
    out[i, 5] = mm[0, 0] + mm[1, 1] * 100
    md = wp.mat22d(wp.float64(n), wp.float64(1.0), wp.float64(2.0), wp.float64(3.0))
    out[i, 6] = int(wp.determinant(md) > wp.float64(0.0))

def run():
    ns = wp.array(np.array([-4, -1, 0, 1, 3, 6], dtype=np.int32))
    grid = wp.array(np.arange(12, dtype=np.int32).reshape(3, 4) - 2)
    out = wp.zeros((6, 7), dtype=int)
    fo = wp.zeros((6, 4), dtype=float)
    h = wp.zeros(6, dtype=wp.float16)
    wp.launch(k, dim=6, inputs=[ns, grid], outputs=[out, fo, h])
    return {"out": out.numpy(), "fo": fo.numpy(), "h": h.numpy()}
