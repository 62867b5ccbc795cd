"""Warp's cooperative CPU blocks (`config.enable_cpu_blocks`: `block_dim` threads per CPU
block that meet in tile ops). A kernel whose threads meet (it uses tiles, tile stacks or
`block_dim()`) runs as its block program (transforms/lanes.py: one CPU thread per block,
the block's threads as lanes); a kernel whose threads never meet runs thread by thread,
as without cooperative blocks, which gives the same results."""

from __future__ import annotations

from ..ir.core import walk
from ..lang.errors import CompileError
from ..types import TileStackType, TileType

# (transforms.lanes is imported where a block program is made: it imports the tile
# builtins, which a process launching only cached kernels never needs)


def _meets(kernel) -> bool:
    """Whether `kernel`'s threads depend on the others of their block. (Found in its IR for one
    thread per block; a kernel that does not compile so, such as one reshaping `tile(x)` to a
    shape that needs block_dim elements, is valid only for its blocks: it meets.)"""
    try:
        ir = kernel.ir()
    except CompileError:
        return True
    for op in walk(ir.body):
        if op.attrs.get("per_lane") or op.name == "tile_map":
            return True
        if any(isinstance(v.type, (TileType, TileStackType)) for v in (*op.operands, *op.results)):
            return True
    return False


def block_launch(kernel, params, block_dim: int, dims: tuple):
    """`wp.launch(..., block_dim=B)` under enable_cpu_blocks: the kernel and dims to run."""
    k = kernel.specialize(params) if kernel.is_generic else kernel
    if not _meets(k):
        return kernel, dims
    from ..transforms.lanes import LaneSpec
    spec = LaneSpec(block_dim, dims=tuple(dims))
    return k.cooperative(spec), (spec.blocks,)


def tiled_launch(kernel, params, block_dim: int, grid: tuple):
    """`wp.launch_tiled(..., block_dim=B)` under enable_cpu_blocks: the kernel to run over
    the grid of blocks."""
    from ..transforms.lanes import LaneSpec
    k = kernel.specialize(params) if kernel.is_generic else kernel
    return k.cooperative(LaneSpec(block_dim, grid_ndim=len(grid)))
