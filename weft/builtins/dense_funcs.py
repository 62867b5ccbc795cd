"""Warp's dense linear algebra builtins (`dense_gemm`, `dense_chol`, `dense_subs`,
`dense_solve`: Warp keeps them undocumented) in weft's kernel language. Matrices are
row-major in flat float32 arrays; `t1`/`t2` = 1 reads A/B transposed.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

import weft as wp


@wp.func
def _at(rows: int, cols: int, i: int, j: int, transpose: int):
    """Where element (i, j) of the rows x cols operand is: transposed, (j, i) of its storage."""
    if transpose == 1:
        return j * rows + i
    return i * cols + j


@wp.func
def dense_gemm(m: int, n: int, p: int, t1: int, t2: int, A: wp.array(dtype=float),
               B: wp.array(dtype=float), C: wp.array(dtype=float)):
    if (t1 == 0 or t1 == 1) and (t2 == 0 or t2 == 1):  # (other flags: nothing, as in Warp)
        for i in range(m):
            for j in range(n):
                total = 0.0
                for k in range(p):
                    total += A[_at(m, p, i, k, t1)] * B[_at(p, n, k, j, t2)]
                C[i * n + j] = total


@wp.func
def dense_chol(n: int, A: wp.array(dtype=float), regularization: float, L: wp.array(dtype=float)):
    for j in range(n):
        s = A[j * n + j] + regularization
        for k in range(j):
            r = L[j * n + k]
            s -= r * r
        s = wp.sqrt(s)
        inv_s = 1.0 / s
        L[j * n + j] = s
        for i in range(j + 1, n):
            t = A[i * n + j]
            for k in range(j):
                t -= L[i * n + k] * L[j * n + k]
            L[i * n + j] = t * inv_s


@wp.func
def dense_subs(n: int, L: wp.array(dtype=float), b: wp.array(dtype=float), x: wp.array(dtype=float)):
    for i in range(n):  # L y = b
        s = b[i]
        for j in range(i):
            s -= L[i * n + j] * x[j]
        x[i] = s / L[i * n + i]
    for r in range(n):  # L^T x = y, from the last row up
        i = n - 1 - r
        s = x[i]
        for j in range(i + 1, n):
            s -= L[j * n + i] * x[j]
        x[i] = s / L[i * n + i]
