"""Block-cooperative BVH and mesh queries: `tile_bvh_query_aabb/ray`, `tile_mesh_query_aabb`,
`tile_bvh_query_next`, `tile_mesh_query_aabb_next`, `tile_query_valid` (and Warp's deprecated
`*_tiled` spellings).

A block traverses one query together and each step hands every thread one result (a tile
of shape (block_dim,), negative where a thread has none). A CPU block is one thread, so a
tiled query is the ordinary query (weft/builtins/bvh.py, mesh.py) with a flag saying
whether the last step found anything, and each step yields a tile of one index. Under
cooperative CPU blocks (`compile_lanes()` threads) a step hands out the next `block_dim`
results, one per thread in order.
"""

from __future__ import annotations

from ...lang.module import compile_lanes
from ...types import StructType, bool_, int32
from ..registry import BUILTINS, builtin
from .construct import CPU_BLOCK_DIM, _per_lane
from .core import map_tiles


def _tiled_type(name, query_type):
    cls = type(name, (), {"__annotations__": {"query": query_type, "valid": bool_}})
    cls.__qualname__ = name
    return StructType(cls)


def _types():
    from ..bvh import BvhQuery
    from ..mesh import MeshQuery
    return _tiled_type("BvhQueryTiled", BvhQuery), _tiled_type("MeshQueryTiled", MeshQuery)


BvhQueryTiled, MeshQueryTiled = _types()


def _start(query_builtin, tiled_type):
    def expand(ctx, args, kwargs):
        query = BUILTINS[query_builtin].expand(ctx, args, kwargs)
        return ctx.b.construct(tiled_type, [query, ctx.b.const(True, bool_)])
    expand.__doc__ = f"the block-cooperative form of {query_builtin}: advance it with the tile query's next"
    return expand


def _next(next_builtin, tiled_type, name):
    def expand(ctx, args, kwargs):
        (q,) = args or [kwargs.get("query")]
        if not (hasattr(q, "type") and q.type is tiled_type):
            ctx.error(f"{name}(): the query must come from the matching tile query constructor", kind=TypeError)
        b = ctx.b
        none = b.const(-1, int32)
        lanes = compile_lanes()
        if lanes > 1:  # each of the block's threads takes the next result in turn
            def step(coords, elems, states):
                (query, index), found = BUILTINS[next_builtin].expand(ctx, [states[0], none], {})
                return [b.select(found, index, none)], [b.cast(found, int32)], [query]
            t, n_found, query = map_tiles(b, (lanes,), [], step, [b.extract(q, 0)])
            return [b.construct(tiled_type, [query, b.cmp("gt", n_found, b.const(0, int32))])], t
        (query, index), found = BUILTINS[next_builtin].expand(ctx, [b.extract(q, 0), none], {})
        index = b.select(found, index, none)
        (t,) = map_tiles(b, (CPU_BLOCK_DIM,), [], lambda coords, elems, states: ([index], [], []))
        return [b.construct(tiled_type, [query, found])], _per_lane(t)
    expand.__doc__ = f"{name}(query): the next result per thread, as a tile (negative: none)"
    return expand


for _name, _query, _type in (("tile_bvh_query_aabb", "bvh_query_aabb", BvhQueryTiled),
                             ("bvh_query_aabb_tiled", "bvh_query_aabb", BvhQueryTiled),
                             ("tile_bvh_query_ray", "bvh_query_ray", BvhQueryTiled),
                             ("bvh_query_ray_tiled", "bvh_query_ray", BvhQueryTiled),
                             ("tile_mesh_query_aabb", "mesh_query_aabb", MeshQueryTiled),
                             ("mesh_query_aabb_tiled", "mesh_query_aabb", MeshQueryTiled)):
    builtin(_name)(_start(_query, _type))

for _name, _next_name, _type in (("tile_bvh_query_next", "bvh_query_next", BvhQueryTiled),
                                 ("bvh_query_next_tiled", "bvh_query_next", BvhQueryTiled),
                                 ("tile_mesh_query_aabb_next", "mesh_query_aabb_next", MeshQueryTiled),
                                 ("mesh_query_aabb_next_tiled", "mesh_query_aabb_next", MeshQueryTiled)):
    builtin(_name, inout=(0,))(_next(_next_name, _type, _name))


@builtin("tile_query_valid")
def tile_query_valid(ctx, args, kwargs):
    """tile_query_valid(query): whether the block's traversal goes on (True until a step
    finds nothing)."""
    (q,) = args or [kwargs.get("query")]
    if not (hasattr(q, "type") and q.type in (BvhQueryTiled, MeshQueryTiled)):
        ctx.error("tile_query_valid(): expected a tiled BVH or mesh query", kind=TypeError)
    return ctx.b.extract(q, 1)
