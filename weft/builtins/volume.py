"""Volume builtins (Warp 1.19's names and signatures): `volume_sample`, `volume_sample_grad`,
`volume_lookup`, `volume_store` (generic over the value type through `dtype=` or the
stored value), their `_f`/`_v`/`_i` spellings, `volume_sample_index` /
`volume_sample_grad_index` (index grids over a user array), `volume_lookup_index`,
`volume_voxel_count` and the index <-> world transforms.

The work is done by kernel-language funcs in volume_funcs.py; here each builtin checks its
arguments, picks the funcs for the value type and emits the call. A value-typed builtin on
a grid of another type gives zeros, as Warp's.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import (
    ArrayType,
    Matrix,
    Scalar,
    Vector,
    float16,
    float32,
    float64,
    int16,
    int32,
    int64,
    uint8,
    uint32,
    vec3d,
    vec3f,
)
from .arguments import as_int32, as_object_id
from .registry import builtin

_FUNCS = None


def _funcs():
    global _FUNCS
    if _FUNCS is None:
        from . import volume_funcs  # kernel-language code needs the frontend
        _FUNCS = volume_funcs
    return _FUNCS


_SCALAR_CODES = {float32: 1, float64: 2, int16: 3, int32: 4, int64: 5, float16: 9, uint32: 10, uint8: 26}
_VECTOR_CODES = {(3, float32): 6, (3, float64): 7, (4, float32): 17, (4, float64): 18}
_SUFFIX = {float16: "h", float32: "f", float64: "d"}


def _type_name(t):
    if isinstance(t, Matrix) and t.dtype in _SUFFIX:
        return f"mat{t.shape[0]}{t.shape[1]}{_SUFFIX[t.dtype]}"
    if isinstance(t, Vector) and t.dtype in _SUFFIX:
        return f"vec{t.length}{_SUFFIX[t.dtype]}"
    return repr(t)


def _value_type(ctx, t, name):
    """(grid type code, scalar type, is a vector) of the value type t, or a compile error."""
    if isinstance(t, Scalar) and t in _SCALAR_CODES:
        return _SCALAR_CODES[t], t, False
    if isinstance(t, Vector) and t.flavor == "vec" and (t.length, t.dtype) in _VECTOR_CODES:
        return _VECTOR_CODES[(t.length, t.dtype)], t.dtype, True
    ctx.error(f"{name}(): volumes hold float32, float64, int16, int32, int64, uint32, uint8, float16, "
              f"vec3f, vec3d, vec4f or vec4d values, not {t!r}", kind=TypeError)


def _typed(ctx, t, name):
    code, scalar, is_vec = _value_type(ctx, t, name)
    return _funcs().typed(t, code, scalar, is_vec)


def _id(ctx, x, name):
    return as_object_id(ctx, x, name, "volume id", "Volume.id", kind=TypeError)


def _vec3(ctx, x, name, allow_double=False):
    ok = (vec3f, vec3d) if allow_double else (vec3f,)
    if isinstance(x, Value) and isinstance(x.type, Vector) and x.type.length == 3 and x.type.flavor == "vec":
        if x.type.dtype is float32:
            return ctx.b.cast(x, vec3f) if x.type is not vec3f else x
        if x.type.dtype is float64 and allow_double:
            return ctx.b.cast(x, vec3d) if x.type is not vec3d else x
    ctx.error(f"{name}(): the point must be a {' or '.join(map(repr, ok))}, got "
              f"{x.type!r}" if isinstance(x, Value) else f"{name}(): the point must be a vec3, got {x!r}",
              kind=TypeError)


def _args(ctx, name, args, kwargs, names, optional=()):
    """The arguments by name (positional or keyword), checked for count and spelling."""
    if len(args) > len(names) or any(k not in names[len(args):] for k in kwargs):
        ctx.error(f"{name}({', '.join(names)}): got {len(args)} positional arguments and keywords "
                  f"{sorted(kwargs)}", kind=TypeError)
    given = dict(zip(names, args), **kwargs)
    missing = [n for n in names if n not in given and n not in optional]
    if missing:
        ctx.error(f"{name}() needs {', '.join(missing)}", kind=TypeError)
    return given


def _dtype(ctx, name, t):
    if isinstance(t, Value) or t is None:
        ctx.error(f"{name}(): dtype must be a type known at compile time (wp.float32, wp.vec3, ...)", kind=TypeError)
    if t is float:
        return float32
    if t is int:
        return int32
    return t


def _mode(ctx, x, name):
    return as_int32(ctx, x, f"{name}() sampling_mode")


def _zero(ctx):
    return ctx.b.const(0, int32)


def _emit_sample(ctx, name, vid, uvw, mode, t):
    fs = _typed(ctx, t, name)
    valid = fs.valid.emit_call(ctx, [vid], {}, None)
    return fs.sample.emit_call(ctx, [vid, uvw, mode, _zero(ctx), _zero(ctx), valid], {}, None)


def _emit_sample_grad(ctx, name, vid, uvw, mode, grad, t):
    fs = _typed(ctx, t, name)
    if not (isinstance(grad, Value) and _same(grad.type, fs.grad_type)):
        got = _type_name(grad.type) if isinstance(grad, Value) else repr(grad)
        ctx.error(f"{name}(): Incompatible gradient type, expected {_type_name(fs.grad_type)}, got {got}")
    valid = fs.valid.emit_call(ctx, [vid], {}, None)
    result = fs.sample_grad.emit_call(ctx, [vid, uvw, mode, _zero(ctx), _zero(ctx), valid], {}, None)
    return [_as(ctx, ctx.b.extract(result, 1), grad.type)], ctx.b.extract(result, 0)


def _same(a, b):
    if a is b:
        return True
    return (isinstance(a, Matrix) and isinstance(b, Matrix) and a.shape == b.shape and a.dtype is b.dtype) or \
        (isinstance(a, Vector) and isinstance(b, Vector) and a.length == b.length and a.dtype is b.dtype
         and a.flavor == b.flavor)


def _as(ctx, v, t):
    return v if v.type is t else ctx.b.cast(v, t)


# sampling --------------------------------------------------------------------------------------
@builtin("volume_sample")
def volume_sample(ctx, args, kwargs):
    """volume_sample(id, uvw, sampling_mode, dtype): the volume's value at index-space point
    uvw (Volume.CLOSEST: the nearest voxel; Volume.LINEAR: trilinear), of type dtype."""
    g = _args(ctx, "volume_sample", args, kwargs, ("id", "uvw", "sampling_mode", "dtype"))
    return _emit_sample(ctx, "volume_sample", _id(ctx, g["id"], "volume_sample"),
                        _vec3(ctx, g["uvw"], "volume_sample"), _mode(ctx, g["sampling_mode"], "volume_sample"),
                        _dtype(ctx, "volume_sample", g["dtype"]))


@builtin("volume_sample_grad", inout=(3,))
def volume_sample_grad(ctx, args, kwargs):
    """volume_sample_grad(id, uvw, sampling_mode, grad, dtype): as volume_sample, and the
    gradient with respect to uvw in `grad` (vec3 for scalars, an N-by-3 matrix for vecN)."""
    g = _args(ctx, "volume_sample_grad", args, kwargs, ("id", "uvw", "sampling_mode", "grad", "dtype"))
    return _emit_sample_grad(ctx, "volume_sample_grad", _id(ctx, g["id"], "volume_sample_grad"),
                             _vec3(ctx, g["uvw"], "volume_sample_grad"),
                             _mode(ctx, g["sampling_mode"], "volume_sample_grad"), g["grad"],
                             _dtype(ctx, "volume_sample_grad", g["dtype"]))


def _fixed_sample(name, t, with_mode=True):
    names = ("id", "uvw", "sampling_mode") if with_mode else ("id", "uvw")

    def expand(ctx, args, kwargs):
        g = _args(ctx, name, args, kwargs, names)
        mode = _mode(ctx, g["sampling_mode"], name) if with_mode else ctx.b.const(0, int32)
        return _emit_sample(ctx, name, _id(ctx, g["id"], name), _vec3(ctx, g["uvw"], name), mode, t)
    expand.__doc__ = f"{name}({', '.join(names)}): volume_sample with dtype={t!r}"
    builtin(name)(expand)


_fixed_sample("volume_sample_f", float32)
_fixed_sample("volume_sample_v", vec3f)
_fixed_sample("volume_sample_i", int32, with_mode=False)


@builtin("volume_sample_grad_f", inout=(3,))
def volume_sample_grad_f(ctx, args, kwargs):
    """volume_sample_grad_f(id, uvw, sampling_mode, grad): a float32 sample and its gradient."""
    g = _args(ctx, "volume_sample_grad_f", args, kwargs, ("id", "uvw", "sampling_mode", "grad"))
    return _emit_sample_grad(ctx, "volume_sample_grad_f", _id(ctx, g["id"], "volume_sample_grad_f"),
                             _vec3(ctx, g["uvw"], "volume_sample_grad_f"),
                             _mode(ctx, g["sampling_mode"], "volume_sample_grad_f"), g["grad"], float32)


# index grids -----------------------------------------------------------------------------------
def _voxel_data(ctx, name, data, background):
    if not (isinstance(data, Value) and isinstance(data.type, ArrayType)):
        ctx.error(f"{name}(): voxel_data must be an array", kind=TypeError)
    t = data.type.dtype
    _value_type(ctx, t, name)
    if isinstance(background, Value):
        if not _same(background.type, t):
            ctx.error(f"{name}(): background has type {background.type!r}, voxel_data holds {t!r}", kind=TypeError)
        background = _as(ctx, background, t)
    else:
        background = ctx.coerce(background, t, what=f"{name}() background")
    return t, background


@builtin("volume_sample_index")
def volume_sample_index(ctx, args, kwargs):
    """volume_sample_index(id, uvw, sampling_mode, voxel_data, background): sample the
    per-voxel array voxel_data (indexed by volume_lookup_index) at uvw; background where
    no voxel is. Differentiable in uvw, voxel_data and background."""
    name = "volume_sample_index"
    g = _args(ctx, name, args, kwargs, ("id", "uvw", "sampling_mode", "voxel_data", "background"))
    t, bg = _voxel_data(ctx, name, g["voxel_data"], g["background"])
    fs = _typed(ctx, t, name)
    return fs.sample_index.emit_call(ctx, [_id(ctx, g["id"], name), _vec3(ctx, g["uvw"], name),
                                           _mode(ctx, g["sampling_mode"], name), g["voxel_data"], bg,
                                           ctx.b.const(True, _bool())], {}, None)


@builtin("volume_sample_grad_index", inout=(5,))
def volume_sample_grad_index(ctx, args, kwargs):
    """volume_sample_grad_index(id, uvw, sampling_mode, voxel_data, background, grad): as
    volume_sample_index, and the gradient with respect to uvw in `grad`."""
    name = "volume_sample_grad_index"
    g = _args(ctx, name, args, kwargs, ("id", "uvw", "sampling_mode", "voxel_data", "background", "grad"))
    t, bg = _voxel_data(ctx, name, g["voxel_data"], g["background"])
    fs = _typed(ctx, t, name)
    grad = g["grad"]
    if not (isinstance(grad, Value) and _same(grad.type, fs.grad_type)):
        got = _type_name(grad.type) if isinstance(grad, Value) else repr(grad)
        ctx.error(f"{name}(): Incompatible gradient type, expected {_type_name(fs.grad_type)}, got {got}")
    result = fs.sample_grad_index.emit_call(ctx, [_id(ctx, g["id"], name), _vec3(ctx, g["uvw"], name),
                                                  _mode(ctx, g["sampling_mode"], name), g["voxel_data"], bg,
                                                  ctx.b.const(True, _bool())], {}, None)
    return [_as(ctx, ctx.b.extract(result, 1), grad.type)], ctx.b.extract(result, 0)


def _bool():
    from ..types import bool_  # noqa: PLC0415
    return bool_


@builtin("volume_lookup_index")
def volume_lookup_index(ctx, args, kwargs):
    """volume_lookup_index(id, i, j, k): the linear index of voxel (i, j, k) (its row in
    Volume.get_voxels()), or -1 where no voxel is."""
    name = "volume_lookup_index"
    g = _args(ctx, name, args, kwargs, ("id", "i", "j", "k"))
    return _funcs().lookup_index.emit_call(ctx, [_id(ctx, g["id"], name), *(as_int32(ctx, g[c], f"{name}() {c}")
                                                                            for c in "ijk")], {}, None)


@builtin("volume_voxel_count")
def volume_voxel_count(ctx, args, kwargs):
    """volume_voxel_count(id): the number of indexable voxels (the size a voxel_data array needs)."""
    g = _args(ctx, "volume_voxel_count", args, kwargs, ("id",))
    return _funcs().voxel_count.emit_call(ctx, [_id(ctx, g["id"], "volume_voxel_count")], {}, None)


# lookups and stores --------------------------------------------------------------------------------
def _emit_lookup(ctx, name, g, t):
    fs = _typed(ctx, t, name)
    return fs.at.emit_call(ctx, [_id(ctx, g["id"], name), *(as_int32(ctx, g[c], f"{name}() {c}") for c in "ijk")],
                           {}, None)


@builtin("volume_lookup")
def volume_lookup(ctx, args, kwargs):
    """volume_lookup(id, i, j, k, dtype): the value of voxel (i, j, k) (a tile value or the
    background where the tree has no leaf voxel)."""
    g = _args(ctx, "volume_lookup", args, kwargs, ("id", "i", "j", "k", "dtype"))
    return _emit_lookup(ctx, "volume_lookup", g, _dtype(ctx, "volume_lookup", g["dtype"]))


def _emit_store(ctx, name, g, t):
    value = g["value"]
    if t is None:
        if not isinstance(value, Value):
            value = ctx.materialize(value)
        t = value.type
    elif isinstance(value, Value):
        if not _same(value.type, t):
            ctx.error(f"{name}(): the value has type {value.type!r}, {t!r} is expected", kind=TypeError)
        value = _as(ctx, value, t)
    else:
        value = ctx.coerce(value, t, what=f"{name}() value")
    fs = _typed(ctx, t, name)
    fs.store.emit_call(ctx, [_id(ctx, g["id"], name), *(as_int32(ctx, g[c], f"{name}() {c}") for c in "ijk"), value],
                       {}, None)


@builtin("volume_store")
def volume_store(ctx, args, kwargs):
    """volume_store(id, i, j, k, value): write value into leaf voxel (i, j, k) of a grid of
    value's type (nothing happens outside the allocated leaves)."""
    _emit_store(ctx, "volume_store", _args(ctx, "volume_store", args, kwargs, ("id", "i", "j", "k", "value")), None)


def _fixed_lookup_store(suffix, t):
    lname, sname = f"volume_lookup_{suffix}", f"volume_store_{suffix}"

    def lookup(ctx, args, kwargs):
        return _emit_lookup(ctx, lname, _args(ctx, lname, args, kwargs, ("id", "i", "j", "k")), t)

    def store(ctx, args, kwargs):
        _emit_store(ctx, sname, _args(ctx, sname, args, kwargs, ("id", "i", "j", "k", "value")), t)
    lookup.__doc__ = f"{lname}(id, i, j, k): volume_lookup with dtype={t!r}"
    store.__doc__ = f"{sname}(id, i, j, k, value): volume_store of a {t!r}"
    builtin(lname)(lookup)
    builtin(sname)(store)


_fixed_lookup_store("f", float32)
_fixed_lookup_store("v", vec3f)
_fixed_lookup_store("i", int32)


# transforms ---------------------------------------------------------------------------------------
def _transform(name, fname, arg):
    def expand(ctx, args, kwargs):
        g = _args(ctx, name, args, kwargs, ("id", arg))
        f = getattr(_funcs(), fname)
        return f.emit_call(ctx, [_id(ctx, g["id"], name), _vec3(ctx, g[arg], name, allow_double=True)], {}, None)
    expand.__doc__ = f"{name}(id, {arg}): the volume's {fname.replace('_', ' ')} map (vec3f or vec3d)"
    builtin(name)(expand)


_transform("volume_index_to_world", "index_to_world", "uvw")
_transform("volume_world_to_index", "world_to_index", "xyz")
_transform("volume_index_to_world_dir", "index_to_world_dir", "uvw")
_transform("volume_world_to_index_dir", "world_to_index_dir", "xyz")
