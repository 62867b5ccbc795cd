"""Mesh builtins: point queries (`mesh_query_point*`, `mesh_query_furthest_point_no_sign`),
ray queries (`mesh_query_ray`, `_anyhit`, `_count_intersections`), box and sphere queries
(`mesh_query_aabb`, `mesh_query_sphere`, `mesh_query_next` and `for face in query:`), and
the accessors (`mesh_eval_position`, `mesh_eval_velocity`, `mesh_eval_face_normal`,
`mesh_get_point`, `mesh_get_velocity`, `mesh_get_index`, `mesh_get`, `mesh_get_bvh`,
`mesh_get_group_root`).

Point and ray queries return Warp's structs (`MeshQueryPoint`, `MeshQueryRay`); the older
forms that write their results into variables (`mesh_query_point(id, p, max_dist, sign,
face, u, v) -> bool`) are recognised by their argument count. The work is done by
kernel-language funcs in mesh_funcs.py.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import StructType, bool_, float32, int32, vec3f
from ..types.array_type import ArrayType
from .arguments import kernel_funcs
from .bvh import AABB, SPHERE, BvhQuery, as_id, as_scalar, as_vec3, bind, check_id
from .hash_grid import ITERATORS
from .registry import builtin


def _struct(name, fields):
    cls = type(name, (), {"__annotations__": fields})
    cls.__qualname__ = name
    return StructType(cls)


MeshQueryPoint = _struct("MeshQueryPoint", {"result": bool_, "sign": float32, "face": int32, "u": float32,
                                            "v": float32})
MeshQueryRay = _struct("MeshQueryRay", {"result": bool_, "sign": float32, "face": int32, "t": float32, "u": float32,
                                        "v": float32, "normal": vec3f})
MeshQuery = _struct("MeshQuery", {"bvh": BvhQuery})
MeshQueryAABB = MeshQuery  # one query type: the kind is a field, so a runtime choice of kind iterates
MeshInfo = _struct("Mesh", {"points": ArrayType(vec3f), "velocities": ArrayType(vec3f), "indices": ArrayType(int32)})
ITERATORS[MeshQuery] = ("mesh_query_next", int32)

funcs = kernel_funcs(".mesh_funcs")


def _call(ctx, name, *args):
    return getattr(funcs(), name).emit_call(ctx, list(args), {}, None)


def _mesh_id(ctx, x, name):
    """The mesh id argument of builtin `name`, checked at the call site."""
    return check_id(ctx, as_id(ctx, x, name), name, "mesh")


def _outputs(ctx, name, result, fields, targets):
    """The older form: (new values of the output variables, result.result). As in Warp, a
    query that finds nothing leaves the output variables as they were."""
    b = ctx.b
    found = b.extract(result, 0)
    out = []
    for field, target in zip(fields, targets):
        if not isinstance(target, Value):
            ctx.error(f"{name}(): output argument '{field}' must be a local variable")
        v = b.extract(result, list(result.type.fields).index(field))
        if v.type is not target.type:
            if isinstance(target.type, type(v.type)) and v.type is not vec3f:
                v = b.cast(v, target.type)
            else:
                ctx.error(f"{name}(): output '{field}' must be a {v.type!r} variable, got {target.type!r}")
        out.append(b.select(found, v, target))
    return out, found


_POINT_FUNCS = {"mesh_query_point": "query_point_rays", "mesh_query_point_no_sign": "query_point",
                "mesh_query_point_sign_normal": "query_point_normal",
                "mesh_query_point_sign_winding_number": "query_point_winding",
                "mesh_query_point_sign_parity": "query_point_parity"}


def _point_query(name, extra, out_fields):
    """Register a point query: (id, point, max_dist, *extra options) -> MeshQueryPoint, or
    (id, point, max_dist, *outputs, *extra) -> bool."""
    n_out = len(out_fields)
    inout = tuple(range(3, 3 + n_out))
    option_types = {"epsilon": float32, "accuracy": float32, "threshold": float32, "n_sample": int32,
                    "perturbation_scale": float32}

    def expand(ctx, args, kwargs):
        legacy = len(args) >= 3 + n_out
        names = ("id", "point", "max_dist") + (out_fields if legacy else ()) + tuple(k for k, _ in extra)
        given = bind(ctx, name, args, kwargs, names, 3 + (n_out if legacy else 0))
        d = _mesh_id(ctx, given["id"], name)
        p = as_vec3(ctx, given["point"], f"{name}() point")
        md = as_scalar(ctx, given["max_dist"], float32, f"{name}() max_dist")
        options = [as_scalar(ctx, given.get(k, default), option_types[k], f"{name}() {k}") for k, default in extra]
        result = _call(ctx, _POINT_FUNCS[name], d, p, md, *options)
        if legacy:
            return _outputs(ctx, name, result, out_fields, [given[f] for f in out_fields])
        return [], result

    expand.__doc__ = f"{name}(id, point, max_dist{''.join(', ' + k for k, _ in extra)}) -> MeshQueryPoint"
    builtin(name, inout=inout)(expand)


_point_query("mesh_query_point", (), ("sign", "face", "u", "v"))
_point_query("mesh_query_point_no_sign", (), ("face", "u", "v"))
_point_query("mesh_query_point_sign_normal", (("epsilon", 1.0e-3),), ("sign", "face", "u", "v"))
_point_query("mesh_query_point_sign_winding_number", (("accuracy", 2.0), ("threshold", 0.5)),
             ("sign", "face", "u", "v"))
_point_query("mesh_query_point_sign_parity", (("n_sample", 1), ("perturbation_scale", 0.1)),
             ("sign", "face", "u", "v"))


@builtin("mesh_query_furthest_point_no_sign", inout=(3, 4, 5))
def mesh_query_furthest_point_no_sign(ctx, args, kwargs):
    """mesh_query_furthest_point_no_sign(id, point, min_dist) -> MeshQueryPoint: the point of
    the mesh furthest from `point`, if further than min_dist."""
    name = "mesh_query_furthest_point_no_sign"
    legacy = len(args) >= 6
    fields = ("face", "u", "v")
    given = bind(ctx, name, args, kwargs, ("id", "point", "min_dist") + (fields if legacy else ()), 6 if legacy else 3)
    d = _mesh_id(ctx, given["id"], name)
    p = as_vec3(ctx, given["point"], f"{name}() point")
    md = as_scalar(ctx, given["min_dist"], float32, f"{name}() min_dist")
    result = _call(ctx, "query_furthest", d, p, md)
    if legacy:
        return _outputs(ctx, name, result, fields, [given[f] for f in fields])
    return [], result


_RAY_OUT = ("t", "u", "v", "sign", "normal", "face")


@builtin("mesh_query_ray", inout=(4, 5, 6, 7, 8, 9))
def mesh_query_ray(ctx, args, kwargs):
    """mesh_query_ray(id, start, dir, max_t, root=-1) -> MeshQueryRay: the first face the ray
    start + t dir hits with 0 <= t < max_t (or the older form with output variables
    t, u, v, sign, normal, face after max_t)."""
    name = "mesh_query_ray"
    legacy = len(args) >= 10
    names = ("id", "start", "dir", "max_t") + (_RAY_OUT if legacy else ()) + ("root",)
    given = bind(ctx, name, args, kwargs, names, 10 if legacy else 4)
    d = _mesh_id(ctx, given["id"], name)
    start = as_vec3(ctx, given["start"], f"{name}() start")
    direction = as_vec3(ctx, given["dir"], f"{name}() dir")
    max_t = as_scalar(ctx, given["max_t"], float32, f"{name}() max_t")
    root = as_scalar(ctx, given.get("root", -1), int32, f"{name}() root")
    result = _call(ctx, "query_ray", d, start, direction, max_t, root)
    if legacy:
        return _outputs(ctx, name, result, _RAY_OUT, [given[f] for f in _RAY_OUT])
    return [], result


@builtin("mesh_query_ray_anyhit")
def mesh_query_ray_anyhit(ctx, args, kwargs):
    """mesh_query_ray_anyhit(id, start, dir, max_t, root=-1) -> bool: whether the ray hits
    any face with 0 <= t < max_t."""
    name = "mesh_query_ray_anyhit"
    given = bind(ctx, name, args, kwargs, ("id", "start", "dir", "max_t", "root"), 4)
    return _call(ctx, "ray_anyhit", _mesh_id(ctx, given["id"], name), as_vec3(ctx, given["start"], f"{name}() start"),
                 as_vec3(ctx, given["dir"], f"{name}() dir"),
                 as_scalar(ctx, given["max_t"], float32, f"{name}() max_t"),
                 as_scalar(ctx, given.get("root", -1), int32, f"{name}() root"))


@builtin("mesh_query_ray_count_intersections")
def mesh_query_ray_count_intersections(ctx, args, kwargs):
    """mesh_query_ray_count_intersections(id, start, dir, root=-1) -> int: how many faces the
    ray start + t dir, t >= 0, crosses."""
    name = "mesh_query_ray_count_intersections"
    given = bind(ctx, name, args, kwargs, ("id", "start", "dir", "root"), 3)
    return _call(ctx, "count_hits_checked", _mesh_id(ctx, given["id"], name),
                 as_vec3(ctx, given["start"], f"{name}() start"), as_vec3(ctx, given["dir"], f"{name}() dir"),
                 as_scalar(ctx, given.get("root", -1), int32, f"{name}() root"))


@builtin("mesh_query_aabb")
def mesh_query_aabb(ctx, args, kwargs):
    """mesh_query_aabb(id, low, high) -> MeshQueryAABB: the faces whose boxes overlap [low, high]."""
    given = bind(ctx, "mesh_query_aabb", args, kwargs, ("id", "low", "high"), 3)
    b = ctx.b
    return _call(ctx, "mesh_query", _mesh_id(ctx, given["id"], "mesh_query_aabb"), b.const(AABB, int32),
                 as_vec3(ctx, given["low"], "mesh_query_aabb() low"),
                 as_vec3(ctx, given["high"], "mesh_query_aabb() high"),
                 b.const(0.0, float32))


@builtin("mesh_query_sphere")
def mesh_query_sphere(ctx, args, kwargs):
    """mesh_query_sphere(id, center, radius) -> MeshQuery: the faces within `radius` of `center`."""
    given = bind(ctx, "mesh_query_sphere", args, kwargs, ("id", "center", "radius"), 3)
    b = ctx.b
    zero = b.construct(vec3f, [b.const(0.0, float32)] * 3)
    return _call(ctx, "mesh_query", _mesh_id(ctx, given["id"], "mesh_query_sphere"), b.const(SPHERE, int32),
                 as_vec3(ctx, given["center"], "mesh_query_sphere() center"), zero,
                 as_scalar(ctx, given["radius"], float32, "mesh_query_sphere() radius"))


def _mesh_next(name):
    def expand(ctx, args, kwargs):
        return query_next_mesh(ctx, name, args, kwargs)

    expand.__doc__ = f"{name}(query, index) -> bool: advance a mesh query; the next face in `index`."
    builtin(name, inout=(0, 1))(expand)


def query_next_mesh(ctx, name, args, kwargs):
    given = bind(ctx, name, args, kwargs, ("query", "index"), 2)
    q, index = given["query"], given["index"]
    if not (isinstance(q, Value) and q.type is MeshQuery):
        ctx.error(f"{name}(): the first argument must be a query from mesh_query_aabb() or mesh_query_sphere()")
    if not (isinstance(index, Value) and isinstance(index.type, type(int32)) and index.type.is_int):
        ctx.error(f"{name}(): the index must be an int variable")
    result = _call(ctx, "mesh_query_next", q, ctx.b.cast(index, int32))
    b = ctx.b
    out = b.extract(result, 2)
    if index.type is not int32:
        out = b.cast(out, index.type)
    return [b.extract(result, 1), out], b.extract(result, 0)


_mesh_next("mesh_query_next")
_mesh_next("mesh_query_aabb_next")


def _accessor(name, func, params, doc):
    def expand(ctx, args, kwargs):
        given = bind(ctx, name, args, kwargs, ("id",) + params, 1 + len(params))
        values = [_mesh_id(ctx, given["id"], name)]
        for p in params:
            t = int32 if p in ("face", "index", "group") else float32
            values.append(as_scalar(ctx, given[p], t, f"{name}() {p}"))
        return _call(ctx, func, *values)

    expand.__doc__ = doc
    builtin(name)(expand)


_accessor("mesh_eval_position", "eval_position", ("face", "bary_u", "bary_v"),
          "mesh_eval_position(id, face, bary_u, bary_v) -> vec3: the point of `face` at (u, v).")
_accessor("mesh_eval_velocity", "eval_velocity", ("face", "bary_u", "bary_v"),
          "mesh_eval_velocity(id, face, bary_u, bary_v) -> vec3: the velocity interpolated at (u, v).")
_accessor("mesh_eval_face_normal", "eval_face_normal", ("face",),
          "mesh_eval_face_normal(id, face) -> vec3: the unit normal of `face` (right-handed winding).")
_accessor("mesh_get_point", "get_point", ("index",),
          "mesh_get_point(id, index) -> vec3: points[indices[index]].")
_accessor("mesh_get_velocity", "get_velocity", ("index",),
          "mesh_get_velocity(id, index) -> vec3: velocities[indices[index]].")
_accessor("mesh_get_index", "get_index", ("index",), "mesh_get_index(id, index) -> int: indices[index].")
_accessor("mesh_get", "mesh_info", (), "mesh_get(id) -> Mesh: the mesh's points, velocities and indices arrays.")


@builtin("mesh_get_bvh")
def mesh_get_bvh(ctx, args, kwargs):
    """mesh_get_bvh(id) -> uint64: the id of the mesh's BVH over its faces' boxes."""
    given = bind(ctx, "mesh_get_bvh", args, kwargs, ("id",), 1)
    return as_id(ctx, given["id"], "mesh_get_bvh")


@builtin("mesh_get_group_root")
def mesh_get_group_root(ctx, args, kwargs):
    """mesh_get_group_root(id, group) -> int: the BVH node of a group's faces (-1 if none)."""
    given = bind(ctx, "mesh_get_group_root", args, kwargs, ("id", "group"), 2)
    from .bvh import funcs as bvh_funcs
    return bvh_funcs().group_root.emit_call(
        ctx, [_mesh_id(ctx, given["id"], "mesh_get_group_root"),
              as_scalar(ctx, given["group"], int32, "mesh_get_group_root() group")], {}, None)
