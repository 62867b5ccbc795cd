"""Angles: degrees and radians, and the quaternion of roll, pitch and yaw angles.

Each expands into scalar arithmetic and `sin`/`cos` primitives, so its derivative comes
from theirs.
"""

from __future__ import annotations

import math

from ..ir.core import Value
from ..types import Scalar, Vector, float32
from .arith import unify
from .math import PRIM
from .registry import builtin


def _float_scalars(ctx, args, kwargs, n, name):
    """`n` float scalars of one type (Python numbers adapt; alone they are float32)."""
    if len(args) != n or kwargs:
        ctx.error(f"{name}() takes {n} argument(s)")
    values = [a if isinstance(a, Value) else None for a in args]
    typed = next((v for v in values if v is not None), None)
    out = []
    for a in args:
        if typed is not None:
            a, _ = unify(ctx, a, typed)
        else:
            a = ctx.coerce(float(a), float32, what=f"{name}() argument")
        if not (isinstance(a.type, Scalar) and a.type.is_float):
            ctx.error(f"{name}() needs float arguments, got {a.type!r}")
        out.append(a)
    if any(v.type is not out[0].type for v in out):
        ctx.error(f"{name}() arguments have different types: {', '.join(repr(v.type) for v in out)}")
    return out


def _scaled(ctx, args, kwargs, name, factor):
    (x,) = _float_scalars(ctx, args, kwargs, 1, name)
    return ctx.b.mul(x, ctx.b.const(factor, x.type))


@builtin("degrees")
def degrees(ctx, args, kwargs):
    """`x` radians in degrees."""
    return _scaled(ctx, args, kwargs, "degrees", 180.0 / math.pi)


@builtin("radians")
def radians(ctx, args, kwargs):
    """`x` degrees in radians."""
    return _scaled(ctx, args, kwargs, "radians", math.pi / 180.0)


@builtin("quat_rpy")
def quat_rpy(ctx, args, kwargs):
    """The rotation by `roll` about x, then `pitch` about y, then `yaw` about z (fixed axes),
    that is the quaternion product qz * qy * qx, written out from the half-angle sines and
    cosines."""
    roll, pitch, yaw = _float_scalars(ctx, args, kwargs, 3, "quat_rpy")
    b = ctx.b
    half = b.const(0.5, roll.type)
    sr, cr, sp, cp, sy, cy = (b.call(PRIM[f], [b.mul(angle, half)])
                              for angle in (roll, pitch, yaw) for f in ("sin", "cos"))

    def terms(first, second, subtract):
        p = b.mul(b.mul(*first[:2]), first[2])
        q = b.mul(b.mul(*second[:2]), second[2])
        return b.sub(p, q) if subtract else b.add(p, q)

    x = terms((cy, cp, sr), (sy, sp, cr), True)
    y = terms((cy, sp, cr), (sy, cp, sr), False)
    z = terms((sy, cp, cr), (cy, sp, sr), True)
    w = terms((cy, cp, cr), (sy, sp, sr), False)
    return b.construct(Vector(4, roll.type, "quat"), [x, y, z, w])
