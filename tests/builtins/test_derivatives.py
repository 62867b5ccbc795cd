"""Every builtin's derivative against central finite differences, in float64.

The case table below is checked against the builtin registry: each entry of `BUILTINS`
has a case (a kernel `out[i] = expr(a, b, ...)` over random points of its domain, away
from kinks and singularities) or an entry in `EXCLUDED` with the reason it has no
gradient to check; each entry of `PRIMITIVES` appears in the IR of some case or in
`EXCLUDED_PRIMITIVES`. A builtin added without a case fails `test_registry_is_covered`.

The check is the VJP identity on random directions (STYLE.md item 9): the adjoint launch,
seeded with a random cotangent `c` on every output component, gives `g = J^T c`; for a
random direction `t` per argument, `<t, g>` must equal `<(f(x + h t) - f(x - h t)) / 2h, c>`.
Kernels are generated from the table as source text into one module file, because weft
compiles kernels from their source.
"""

from __future__ import annotations

import importlib.util
import sys
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

import weft as wp
from weft.builtins.registry import BUILTINS, PRIMITIVES
from weft.ir.core import walk

N = 256          # points per launch
H = 1e-6         # finite-difference step, relative: x +- H * t with |t| ~ 1 + |x|
RTOL, ATOL = 1e-6, 1e-8
DIRECTIONS = 2   # random directions per argument


# Argument samplers: (weft type name, rng -> array of n points) ------------------------------
def _uniform(lo, hi, shape=()):
    return lambda rng, n: rng.uniform(lo, hi, (n, *shape))


def F(lo=-2.0, hi=2.0):
    return ("float64", _uniform(lo, hi))


def V(n=3, lo=-2.0, hi=2.0):
    return (f"vec{n}d", _uniform(lo, hi, (n,)))


def M(n=3, lo=-2.0, hi=2.0):
    return (f"mat{n}{n}d", _uniform(lo, hi, (n, n)))


def M_INVERTIBLE(n):
    """Near 2 * identity: far from singular."""
    return (f"mat{n}{n}d", lambda rng, m: 2.0 * np.eye(n) + rng.uniform(-0.4, 0.4, (m, n, n)))


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _transform(rng, n):
    return np.concatenate([rng.uniform(-2, 2, (n, 3)), _unit(rng.standard_normal((n, 4)))], axis=1)


SV = ("spatial_vectord", _uniform(-2.0, 2.0, (6,)))
Q = ("quatd", lambda rng, n: _unit(rng.standard_normal((n, 4))))
T = ("transformd", _transform)
I = ("int32", lambda rng, n: rng.integers(-3, 4, n).astype(np.int32))
COND = ("int32", lambda rng, n: rng.integers(0, 2, n).astype(np.int32))


# Keep-filters: points far enough from a kink that the finite difference does not cross it
def apart(u, v, d=0.05):
    return np.abs(u - v) > d


def off_grid(x, period=1.0, d=0.05):
    """x at least `d` away from every multiple of `period`."""
    r = np.mod(x, period)
    return (r > d) & (r < period - d)


@dataclass(frozen=True)
class Case:
    builtin: str             # the registry name (or an operator, for OPERATOR_CASES)
    expr: str                # in terms of the arguments a, b, c, d
    args: tuple              # (type name, sampler) per argument
    out: str = "float64"     # type name of the result
    keep: object = None      # (*args) -> mask of the points to use
    exact_zero: bool = False  # piecewise constant: the gradient must be exactly zero
    variant: str = ""
    stmt: str = "out[i] = {expr}"

    @property
    def id(self) -> str:
        return f"{self.builtin}_{self.variant}" if self.variant else self.builtin

    @property
    def stores(self) -> bool:
        return self.stmt.startswith("out[i] =")


UNARY_DOMAINS = {
    "sin": (-6, 6), "cos": (-6, 6), "tan": (-1.2, 1.2), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9),
    "atan": (-5, 5), "sinh": (-3, 3), "cosh": (-3, 3), "tanh": (-3, 3), "exp": (-5, 5),
    "exp2": (-5, 5), "log": (0.1, 10), "log2": (0.1, 10), "log10": (0.1, 10), "sqrt": (0.1, 10),
    "erf": (-3, 3), "frac": (-5, 5),
}
PIECEWISE_CONSTANT = ("floor", "ceil", "round", "rint", "trunc")


def _case(name, expr, *args, **kw):
    return Case(name, expr, tuple(args), **kw)


CASES = [
    *(_case(n, f"wp.{n}(a)", F(lo, hi), keep=(lambda a: off_grid(a)) if n == "frac" else None)
      for n, (lo, hi) in UNARY_DOMAINS.items()),
    _case("cbrt", "wp.cbrt(a)", F(-8, 8), keep=lambda a: np.abs(a) > 0.1),
    *(_case(n, f"wp.{n}(a)", F(-5, 5), keep=lambda a: off_grid(a, 0.5), exact_zero=True)
      for n in PIECEWISE_CONSTANT),
    _case("sign", "wp.sign(a)", F(), keep=lambda a: np.abs(a) > 0.05, exact_zero=True),
    _case("step", "wp.step(a)", F(), keep=lambda a: np.abs(a) > 0.05, exact_zero=True),
    _case("abs", "wp.abs(a)", F(), keep=lambda a: np.abs(a) > 0.05),
    # asin and acos clamp their argument to [-1, 1]: flat (zero gradient) beyond it
    *(_case(n, f"wp.{n}(a)", F(-3, 3), keep=lambda a: np.abs(a) > 1.05, variant="clamped", exact_zero=True)
      for n in ("asin", "acos")),
    _case("min", "wp.min(a, b)", F(), F(), keep=apart),
    _case("max", "wp.max(a, b)", F(), F(), keep=apart),
    _case("pow", "wp.pow(a, b)", F(0.2, 3), F(-2.5, 2.5)),
    _case("pow", "wp.pow(a, wp.float64(b))", F(-3, -0.2), I, variant="negative_base_integer_exponent"),
    _case("atan2", "wp.atan2(a, b)", F(), F(),
          keep=lambda y, x: (np.hypot(x, y) > 0.3) & ~((x < 0) & (np.abs(y) < 0.05))),
    _case("clamp", "wp.clamp(a, b, c)", F(), F(-1.5, -0.1), F(0.1, 1.5),
          keep=lambda x, lo, hi: apart(x, lo) & apart(x, hi)),
    _case("lerp", "wp.lerp(a, b, c)", F(), F(), F(-0.5, 1.5)),
    _case("smoothstep", "wp.smoothstep(a, b, c)", F(-1, -0.2), F(0.2, 1), F(-1.5, 1.5),
          keep=lambda e0, e1, x: apart(x, e0) & apart(x, e1)),
    _case("select", "wp.select(a != 0, b, c)", COND, F(), F()),
    _case("where", "wp.where(a != 0, b, c)", COND, F(), F()),
    _case("where", "wp.where(a != 0, b, c)", COND, V(), V(), out="vec3d", variant="vec3"),
    # componentwise forms of scalar builtins
    _case("sin", "wp.sin(a)", V(), out="vec3d", variant="vec3"),
    _case("sqrt", "wp.sqrt(a)", M(2, 0.1, 4), out="mat22d", variant="mat22"),
    _case("min", "wp.min(a, b)", V(), V(), out="vec3d", keep=apart, variant="vec3"),
    _case("max", "wp.max(a, b)", V(), F(), out="vec3d", keep=lambda a, b: apart(a, b[:, None]),
          variant="vec3_scalar"),
    _case("pow", "wp.pow(a, b)", V(3, 0.2, 3), V(), out="vec3d", variant="vec3"),
    _case("lerp", "wp.lerp(a, b, c)", V(), V(), F(), out="vec3d", variant="vec3"),
    _case("clamp", "wp.clamp(a, b, c)", V(), F(-1.5, -0.1), F(0.1, 1.5), out="vec3d", variant="vec3",
          keep=lambda x, lo, hi: apart(x, lo[:, None]) & apart(x, hi[:, None])),
    # vectors and matrices
    _case("dot", "wp.dot(a, b)", V(), V()),
    _case("dot", "wp.dot(a, b)", Q, Q, variant="quat"),
    _case("cross", "wp.cross(a, b)", V(), V(), out="vec3d"),
    _case("length", "wp.length(a)", V(4), keep=lambda a: np.linalg.norm(a, axis=1) > 0.3),
    _case("length_sq", "wp.length_sq(a)", V(4)),
    _case("normalize", "wp.normalize(a)", V(), out="vec3d", keep=lambda a: np.linalg.norm(a, axis=1) > 0.3),
    _case("cw_mul", "wp.cw_mul(a, b)", V(), V(), out="vec3d"),
    _case("cw_div", "wp.cw_div(a, b)", M(2), M(2), out="mat22d", keep=lambda a, b: np.abs(b) > 0.3),
    _case("outer", "wp.outer(a, b)", V(), V(), out="mat33d"),
    _case("transpose", "wp.transpose(a)", M(3), out="mat33d"),
    _case("trace", "wp.trace(a)", M(4)),
    _case("diag", "wp.diag(a)", V(), out="mat33d"),
    _case("skew", "wp.skew(a)", V(), out="mat33d"),
    *(_case("determinant", "wp.determinant(a)", M(n), variant=f"mat{n}{n}") for n in (2, 3, 4)),
    *(_case("inverse", "wp.inverse(a)", M_INVERTIBLE(n), out=f"mat{n}{n}d", variant=f"mat{n}{n}")
      for n in (2, 3, 4)),
    _case("inverse_approx", "wp.inverse_approx(a)", M_INVERTIBLE(3), out="mat33d"),
    # quaternions and transforms
    _case("quat_from_axis_angle", "wp.quat_from_axis_angle(a, b)", V(), F(-4, 4), out="quatd"),
    _case("quat_inverse", "wp.quat_inverse(a)", Q, out="quatd"),
    _case("quat_rotate", "wp.quat_rotate(a, b)", Q, V(), out="vec3d"),
    _case("quat_rotate_inv", "wp.quat_rotate_inv(a, b)", Q, V(), out="vec3d"),
    _case("quat_to_matrix", "wp.quat_to_matrix(a)", Q, out="mat33d"),
    _case("transform_get_translation", "wp.transform_get_translation(a)", T, out="vec3d"),
    _case("transform_get_rotation", "wp.transform_get_rotation(a)", T, out="quatd"),
    _case("transform_point", "wp.transform_point(a, b)", T, V(), out="vec3d"),
    _case("transform_vector", "wp.transform_vector(a, b)", T, V(), out="vec3d"),
    _case("transform_multiply", "wp.transform_multiply(a, b)", T, T, out="transformd"),
    _case("transform_inverse", "wp.transform_inverse(a)", T, out="transformd"),
    # builtins/rotation.py
    _case("nonzero", "wp.nonzero(a)", F(), keep=lambda a: np.abs(a) > 0.05, exact_zero=True),
    _case("copysign", "wp.copysign(a, b)", F(), F(), keep=lambda a, b: (np.abs(a) > 0.05) & (np.abs(b) > 0.05)),
    _case("matrix_from_rows", "wp.matrix_from_rows(a, b)", V(), V(), out="matrix((2, 3), wp.float64)"),
    _case("matrix_from_cols", "wp.matrix_from_cols(a, b)", V(), V(), out="matrix((3, 2), wp.float64)"),
    # a rotation matrix of a unit quaternion back to the quaternion (w > 0.2: away from the sign flip)
    _case("quat_from_matrix", "wp.quat_from_matrix(wp.quat_to_matrix(a))", Q, out="quatd",
          keep=lambda q: q[:, 3] > 0.2),
    _case("quat_to_axis_angle", "", Q, keep=lambda q: (q[:, 3] > 0.2) & (np.linalg.norm(q[:, :3], axis=1) > 0.2),
          stmt="axis, angle = wp.quat_to_axis_angle(a)\n    out[i] = angle * axis[0] + axis[1]"),
    _case("quat_slerp", "wp.quat_slerp(a, b, c)", Q, Q, F(0, 1), out="quatd",
          keep=lambda p, q, t: np.abs(np.sum(p * q, axis=1)) < 0.9),
    _case("spatial_top", "wp.spatial_top(a)", SV, out="vec3d"),
    _case("spatial_bottom", "wp.spatial_bottom(a)", SV, out="vec3d"),
    _case("spatial_dot", "wp.spatial_dot(a, b)", SV, SV),
    _case("spatial_cross", "wp.spatial_cross(a, b)", SV, SV, out="spatial_vectord"),
    _case("spatial_cross_dual", "wp.spatial_cross_dual(a, b)", SV, SV, out="spatial_vectord"),
    _case("spatial_adjoint", "wp.spatial_adjoint(a, b)", M(3), M(3), out="spatial_matrixd"),
    _case("transform_point", "wp.transform_point(a, b)", M(4), V(), out="vec3d", variant="mat44"),
    _case("transform_vector", "wp.transform_vector(a, b)", M(4), V(), out="vec3d", variant="mat44"),
    # decompositions (builtins/decompositions.py): smooth functions of the factors
    _case("svd3", "", M_INVERTIBLE(3),
          stmt="u, s, v = wp.svd3(a)\n    out[i] = s[0] + 2.0 * s[1] + 3.0 * s[2] + u[0, 1] * v[2, 0]"),
    _case("svd2", "", M_INVERTIBLE(2),
          stmt="u, s, v = wp.svd2(a)\n    out[i] = s[0] * s[1] + 2.0 * s[1] + u[1, 0] * v[0, 1]"),
    _case("eig3", "", M(3),  # a symmetric function of the eigenvalues (their order is not fixed)
          stmt="q, d = wp.eig3(a + wp.transpose(a))\n    out[i] = wp.dot(wp.cw_mul(d, d), d)"),
    _case("qr3", "", M_INVERTIBLE(3), stmt="q, r = wp.qr3(a)\n    out[i] = r[0, 1] + 2.0 * r[2, 2] + q[1, 2]"),
    # operators spelled as builtins (builtins/operators.py): the operator's own IR
    _case("add", "wp.add(a, b)", V(), V(), out="vec3d"),
    _case("sub", "wp.sub(a, b)", F(), F()),
    _case("mul", "wp.mul(a, b)", M(3), V(), out="vec3d"),
    _case("div", "wp.div(a, b)", V(), F(), out="vec3d", keep=lambda a, b: np.abs(b) > 0.3, variant="builtin"),
    _case("mod", "wp.mod(a, b)", F(-5, 5), F(-2, 2), keep=lambda a, b: (np.abs(b) > 0.5) & off_grid(a / b),
          variant="builtin"),
    _case("floordiv", "wp.floordiv(a, b)", F(-5, 5), F(-2, 2), exact_zero=True, variant="builtin",
          keep=lambda a, b: (np.abs(b) > 0.5) & off_grid(a / b)),
    _case("neg", "wp.neg(a)", Q, out="quatd", variant="builtin"),
    _case("div_approx", "wp.div_approx(a, b)", M(2), F(), out="mat22d", keep=lambda a, b: np.abs(b) > 0.3),
    _case("pos", "wp.pos(a)", M(2), out="mat22d"),
    # angles (builtins/angles.py)
    _case("degrees", "wp.degrees(a)", F()),
    _case("radians", "wp.radians(a)", F()),
    _case("quat_rpy", "wp.quat_rpy(a, b, c)", F(-3, 3), F(-1.5, 1.5), F(-3, 3), out="quatd"),
    # special functions (builtins/special.py)
    _case("erfc", "wp.erfc(a)", F(-2, 2)),
    _case("erfinv", "wp.erfinv(a)", F(-0.9, 0.9)),
    _case("erfcinv", "wp.erfcinv(a)", F(0.1, 1.9)),
    # in-place setters (builtins/mutating.py)
    _case("transform_set_translation", "", T, V(), out="transformd",
          stmt="x = a\n    wp.transform_set_translation(x, b)\n    out[i] = x"),
    _case("transform_set_rotation", "", T, Q, out="transformd",
          stmt="x = a\n    wp.transform_set_rotation(x, b)\n    out[i] = x"),
    # reductions (builtins/reductions.py)
    _case("ddot", "wp.ddot(a, b)", M(3), M(3)),
    _case("get_diag", "wp.get_diag(a)", M(3), out="vec3d"),
    # atomics that have a derivative: the adjoint reads (and keeps) the output adjoint
    _case("atomic_add", "", F(), stmt="wp.atomic_add(out, i, a)"),
    _case("atomic_sub", "", V(), out="vec3d", stmt="wp.atomic_sub(out, i, a)"),
]

# Operators are not registry entries, but their derivative rules live in the reverse pass
OPERATOR_CASES = [
    _case("div", "a / b", F(), F(), keep=lambda a, b: np.abs(b) > 0.3),
    _case("mod", "a % b", F(-5, 5), F(-2, 2), keep=lambda a, b: (np.abs(b) > 0.5) & off_grid(a / b)),
    _case("floordiv", "a // b", F(-5, 5), F(-2, 2), keep=lambda a, b: (np.abs(b) > 0.5) & off_grid(a / b),
          exact_zero=True),
    _case("pow_operator", "a ** b", F(0.2, 3), F(-2.5, 2.5)),
    _case("neg", "-a", V(), out="vec3d"),
    _case("matvec", "a @ b", M(3), V(), out="vec3d"),
    _case("vecmat", "a * b", V(), M(3), out="vec3d"),
    _case("matmul", "a * b", M(3), M(3), out="mat33d"),
    _case("scale", "a * b", F(), M(2), out="mat22d"),
    _case("mixed", "wp.float64(a) * b + wp.float64(wp.abs(a))", I, F()),
]

# Known-wrong derivatives, by case id: pytest.mark.xfail(strict=True, reason=...), never removed cases
XFAIL: dict[str, pytest.MarkDecorator] = {}

# Registry entries with no derivative to check, and why -------------------------------------
EXCLUDED = {
    "tid": "integer thread index, no arguments",
    "_adjugate_inverse": "the body of inverse (linalg.matrix_inverse), whose rule the inverse cases check",
    "_matmul_unfused": "the forward products of svd3 and eig3 (linalg.py), whose rules their cases check",
    "len": "integer result",
    "isnan": "bool result", "isinf": "bool result", "isfinite": "bool result",
    "bit_count": "integer operand and result",
    "identity": "a constant (no float arguments)",
    "quat_identity": "a constant (no float arguments)",
    "transform_identity": "a constant (no float arguments)",
    "rand_init": "integer random state", "randi": "integer result", "randu": "integer result",
    "randn": "its only input is the integer random state",
    **{name: "its only input is the integer random state" for name in (
        "sample_triangle", "sample_unit_ring", "sample_unit_disk", "sample_unit_square", "sample_unit_cube",
        "sample_unit_sphere", "sample_unit_sphere_surface", "sample_unit_hemisphere",
        "sample_unit_hemisphere_surface")},
    "randf": "float32-only bounds (this harness is float64); test_derivatives_rules checks the bounds",
    "sample_cdf": "integer result (an index drawn from the cdf)",
    "atomic_min": "the winner claims the adjoint: tests/builtins/test_atomic_kinds.py",
    "atomic_max": "the winner claims the adjoint: tests/builtins/test_atomic_kinds.py",
    "atomic_exch": "no rule for floats: the adjoint raises NotDifferentiableError (test_derivatives_rules)",
    "atomic_cas": "no rule for floats (a lock primitive); raises NotDifferentiableError",
    "atomic_and": "integers only", "atomic_or": "integers only", "atomic_xor": "integers only",
    **{n: "integer operands" for n in ("bit_and", "bit_or", "bit_xor", "lshift", "rshift", "invert", "bit_count")},
    "unot": "bool result",
    "cast": "bit reinterpretation, not differentiable",
    "print": "side effect only, skipped by the replay",
    "printf": "side effect only, skipped by the replay",
    "expect_eq": "a check that prints, skipped by the replay",
    "lower_bound": "integer result (an index into a sorted array)",
    "argmin": "integer result", "argmax": "integer result",
    "expect_neq": "a check that prints, skipped by the replay",
    "expect_near": "a check that prints, skipped by the replay",
    **{n: "Perlin noise selected by the integer state (floor per cell): tests/builtins/test_noise.py "
          "checks its gradients against analytic values and central differences"
       for n in ("noise", "pnoise", "curlnoise")},
    "poisson": "integer result",
    "hash_grid_query": "a query object (integer cells)", "hash_grid_query_next": "bool and integer results",
    "hash_grid_point_id": "integer result",
    "texture_sample": "needs a texture: tests/builtins/test_texture_sample.py checks coordinate and LOD gradients "
                      "of every filter, address mode and dimension against float64 central differences",
    "dense_gemm": "writes an array, no result: tests/builtins/test_dense.py checks its gradients against "
                  "analytic values",
    **{n: "writes an array, no result; gradients not checked (Warp's are not differentiable, but dense_solve)"
       for n in ("dense_chol", "dense_subs", "dense_solve")},
    **{n: "needs a volume: tests/geometry/test_volume.py checks sampling gradients (index and world "
          "space, voxel_data and background of index grids) against float64 central differences"
       for n in ("volume_sample", "volume_sample_f", "volume_sample_v", "volume_sample_grad", "volume_sample_grad_f",
                 "volume_sample_index", "volume_sample_grad_index", "volume_index_to_world",
                 "volume_index_to_world_dir", "volume_world_to_index", "volume_world_to_index_dir")},
    **{n: "integer coordinates or result, or a store: nothing to differentiate"
       for n in ("volume_sample_i", "volume_lookup", "volume_lookup_f", "volume_lookup_i", "volume_lookup_v",
                 "volume_lookup_index", "volume_voxel_count", "volume_store", "volume_store_f", "volume_store_i",
                 "volume_store_v")},
    **{n: "a query object or integer/bool results (geometry as a constant, as in Warp)" for n in (
        "bvh_query_aabb", "bvh_query_ray", "bvh_query_sphere", "bvh_query_capsule", "bvh_query_next",
        "bvh_get_group_root", "mesh_query_aabb", "mesh_query_sphere", "mesh_query_next", "mesh_query_aabb_next",
        "mesh_query_ray_anyhit", "mesh_query_ray_count_intersections", "mesh_get", "mesh_get_bvh",
        "mesh_get_group_root", "mesh_get_index", "intersect_tri_tri")},
    **{n: "the mesh is a constant of differentiation (as in Warp): no float arguments" for n in (
        "mesh_get_point", "mesh_get_velocity", "mesh_eval_face_normal")},
    **{n: "kernel-language funcs (reverse mode through them); tests/geometry/test_mesh_grad.py checks "
          "mesh_query_point_no_sign, mesh_query_ray, mesh_eval_position/velocity and closest_point_edge_edge "
          "against float64 finite differences; the other point queries share their closest-point code" for n in (
        "mesh_query_point", "mesh_query_point_no_sign", "mesh_query_point_sign_normal",
        "mesh_query_point_sign_parity", "mesh_query_point_sign_winding_number", "mesh_query_furthest_point_no_sign",
        "mesh_query_ray", "mesh_eval_position", "mesh_eval_velocity", "closest_point_edge_edge")},
}
EXCLUDED_PRIMITIVES = {
    "bitcast": "wp.cast: bit reinterpretation, not differentiable",
    "isnan": "bool result", "isinf": "bool result", "isfinite": "bool result",
    "bit_count": "integer operand and result",
    "rand_pcg": "integer hash of the random state",
    "libm_logf": "used by randn on values derived from the integer random state",
    **{f"libm_{name}": "used by the sample_* builtins on values derived from the integer random state"
       for name in ("sinf", "acosf", "powf")},
    "libm_cosf": "used by randn on values derived from the integer random state",
    "traversal_stack": "geometry traversal stack (node references, box distances): tests/geometry",
    "traversal_stack_push": "geometry traversal stack (node references, box distances): tests/geometry",
    "traversal_stack_read": "geometry traversal stack (node references, box distances): tests/geometry",
    "prefetch": "a cache hint of the mesh traversals: no value",
    "constant_load": "mesh/BVH data read as a constant of differentiation (as in Warp): tests/geometry",
    **{f"libm_{n}": "used by the samplers on values derived from the integer random state"
       for n in ("expf", "sinf", "acosf", "powf")},
}


# Kernels, generated from the table into one module ----------------------------------------
ARG_NAMES = "abcd"


def kernel_source(case: Case) -> str:
    names = ARG_NAMES[: len(case.args)]
    params = [f"{n}_: wp.array(dtype=wp.{spec[0]})" for n, spec in zip(names, case.args)]
    lines = [
        "@wp.kernel",
        f"def d_{case.id}({', '.join(params)}, out: wp.array(dtype=wp.{case.out})):",
        "    i = wp.tid()",
        *(f"    {n} = {n}_[i]" for n in names),
        "    " + case.stmt.format(expr=case.expr),
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """Kernel per case id, from a generated module (weft reads kernel source from files)."""
    path = tmp_path_factory.mktemp("derivatives") / "derivative_kernels.py"
    path.write_text("import weft as wp\n\n\n" + "\n\n".join(kernel_source(c) for c in CASES + OPERATOR_CASES))
    spec = importlib.util.spec_from_file_location("derivative_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield {c.id: getattr(module, f"d_{c.id}") for c in CASES + OPERATOR_CASES}
    sys.modules.pop(spec.name, None)


# Harness ----------------------------------------------------------------------------------
def wtype(name):
    return eval(f"wp.{name}", {"wp": wp})  # a name (vec3d) or a type expression (matrix(...))


def sample(case: Case, rng, n=N) -> list[np.ndarray]:
    """n points of the case's domain, drawn at random and filtered by `keep`."""
    xs = [spec[1](rng, 8 * n) for spec in case.args]
    if case.keep is not None:
        mask = np.asarray(case.keep(*xs)).reshape(8 * n, -1).all(axis=1)
        assert mask.sum() >= n, f"{case.id}: too few points pass the keep-filter"
        xs = [x[mask] for x in xs]
    return [x[:n] for x in xs]


def _arrays(case, xs):
    return [wp.array(np.ascontiguousarray(x), dtype=wtype(s[0])) for s, x in zip(case.args, xs)]


def primal(kernel, case: Case, xs) -> np.ndarray:
    out = wp.zeros(len(xs[0]), dtype=wtype(case.out))
    wp.launch(kernel, len(xs[0]), inputs=[*_arrays(case, xs), out])
    return out.numpy()


def adjoint(kernel, case: Case, xs, cot) -> tuple[list[np.ndarray], np.ndarray]:
    """(adjoint of each argument, output adjoint after the launch) for output cotangent `cot`."""
    ins = _arrays(case, xs)
    adj_ins = [wp.zeros_like(a) for a in ins]
    out = wp.zeros(len(xs[0]), dtype=wtype(case.out))
    adj_out = wp.array(cot, dtype=wtype(case.out))
    wp.launch(kernel, len(xs[0]), inputs=[*ins, out], adj_inputs=[*adj_ins, adj_out], adjoint=True)
    return [a.numpy() for a in adj_ins], adj_out.numpy()


def _flat(x):
    return x.reshape(len(x), -1)


def check_vjp(kernel, case: Case, xs, cot, grads, rng):
    """<t, J^T c> == <J t, c> per point, J t by central differences, for random t per argument."""
    c = _flat(cot)
    for k, (x, g) in enumerate(zip(xs, grads)):
        if not np.issubdtype(x.dtype, np.floating):
            continue
        for _ in range(DIRECTIONS):
            t = rng.standard_normal(x.shape) * (1.0 + np.abs(x))
            plus = [x + H * t if j == k else y for j, y in enumerate(xs)]
            minus = [x - H * t if j == k else y for j, y in enumerate(xs)]
            jt = _flat(primal(kernel, case, plus) - primal(kernel, case, minus)) / (2 * H)
            fd = np.sum(jt * c, axis=1)
            vjp = np.sum(_flat(t) * _flat(g), axis=1)
            scale = np.linalg.norm(_flat(t), axis=1) * np.linalg.norm(_flat(g), axis=1) \
                + np.linalg.norm(jt, axis=1) * np.linalg.norm(c, axis=1)
            bad = np.flatnonzero(np.abs(vjp - fd) > RTOL * scale + ATOL)
            if bad.size:
                p = bad[0]
                pytest.fail(f"{case.id}: d/d{ARG_NAMES[k]} wrong at {bad.size}/{len(x)} points; first at "
                            f"{[y[p].tolist() for y in xs]}: <t, adjoint> = {float(vjp[p])!r}, finite "
                            f"differences {float(fd[p])!r} (t = {t[p].tolist()})\n{kernel_source(case)}")


def _params(cases):
    return [pytest.param(c, id=c.id, marks=XFAIL[c.id]) if c.id in XFAIL else pytest.param(c, id=c.id)
            for c in cases]


@pytest.mark.parametrize("case", _params(CASES + OPERATOR_CASES))
def test_adjoint_matches_finite_differences(case, kernels):
    kernel = kernels[case.id]
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    xs = sample(case, rng)
    cot = rng.standard_normal(primal(kernel, case, xs).shape)
    grads, adj_out = adjoint(kernel, case, xs, cot)
    # a user's adjoint launch reads the adjoint of an output it only writes, and keeps it
    np.testing.assert_array_equal(adj_out, cot)
    for x, g in zip(xs, grads):
        if case.exact_zero or not np.issubdtype(x.dtype, np.floating):
            assert not np.any(g), f"{case.id}: expected exactly zero gradient, got {g[g != 0][:5]}"
    check_vjp(kernel, case, xs, cot, grads, rng)


# tile builtins and primitives: checked by tests/builtins/tiles/test_tile_derivatives.py
TILES = {n for n, b in BUILTINS.items() if b.expand.__module__.startswith("weft.builtins.tiles")}
TILE_PRIMITIVES = {n for n, p in PRIMITIVES.items() if p.lower.__module__.startswith("weft.builtins.tiles")}


def test_registry_is_covered(kernels):
    """Each builtin has a case or an exclusion, and each primitive is called by some case's
    kernel or excluded: a new builtin without a derivative check fails here."""
    covered = {c.builtin for c in CASES}
    assert not covered & set(EXCLUDED), f"both covered and excluded: {sorted(covered & set(EXCLUDED))}"
    missing = set(BUILTINS) - covered - set(EXCLUDED) - TILES
    assert not missing, f"builtins with no derivative case and no exclusion: {sorted(missing)}"
    stale = (covered | set(EXCLUDED)) - set(BUILTINS)
    assert not stale, f"cases or exclusions for builtins that do not exist: {sorted(stale)}"

    called = {op.attrs["fn"].name for c in CASES for op in walk(kernels[c.id].ir().body) if op.name == "call"}
    assert not called & set(EXCLUDED_PRIMITIVES), f"excluded but called: {sorted(called & set(EXCLUDED_PRIMITIVES))}"
    missing = set(PRIMITIVES) - called - set(EXCLUDED_PRIMITIVES) - TILE_PRIMITIVES
    assert not missing, f"primitives no derivative case calls and not excluded: {sorted(missing)}"
    stale = set(EXCLUDED_PRIMITIVES) - set(PRIMITIVES)
    assert not stale, f"exclusions for primitives that do not exist: {sorted(stale)}"
