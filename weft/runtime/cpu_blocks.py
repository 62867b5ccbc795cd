"""Warp's cooperative CPU blocks (`config.enable_cpu_blocks`: `block_dim` threads per CPU
block) against weft's CPU tiles (one thread per block): the launches that give Warp's
results anyway, and a clear refusal naming why for the others."""

from __future__ import annotations

import math

from ..ir.core import walk


def _kernel_ops(kernel, params) -> list:
    """The ops of `kernel`'s IR (a generic kernel: its overload for `params`)."""
    k = kernel.specialize(params) if kernel.is_generic else kernel
    return list(walk(k.ir().body))


def _inside_tile_ops(ops) -> set:
    """Ids of the ops in `ops` that run inside a tile op (a tile_map's body)."""
    return {id(inner) for op in ops if op.name == "tile_map" for region in op.regions for inner in walk(region)}


def check_block_launch(kernel, params, block_dim: int, dims: tuple):
    """`wp.launch(..., block_dim=B)`: each weft thread is one of Warp's lanes and runs the
    block's tile ops itself, which gives Warp's results unless a tile op gathers the lanes'
    values (tile(x), untile, stacks, random tiles, scatters), adds into memory (it would add
    once per lane, not once per block), or the launch leaves a partial block."""
    ops = _kernel_ops(kernel, params)
    total = math.prod(dims)
    if total % block_dim and any(op.name == "tile_map" for op in ops):
        raise NotImplementedError(
            f"launch: kernel '{kernel.name}' uses tiles and its {total} threads leave a partial block of "
            f"block_dim={block_dim} under config.enable_cpu_blocks (Warp's tile ops then see only the block's "
            "active threads); weft runs one thread per CPU block: use wp.launch_tiled")
    inside = _inside_tile_ops(ops)
    if any(op.attrs.get("per_lane") or (op.name == "atomic" and id(op) in inside) for op in ops):
        raise NotImplementedError(
            f"launch: kernel '{kernel.name}' with block_dim={block_dim} under config.enable_cpu_blocks: Warp "
            "would run its threads as cooperative blocks, weft runs each thread's tile ops itself, and this "
            "kernel's tile ops depend on that (they gather the block's threads or add into memory once per "
            "block). Use wp.launch_tiled, or leave enable_cpu_blocks off")


def check_lane_independent(kernel, grid_ndim: int, block_dim: int, params: list):
    """`launch_tiled(..., block_dim=B)`: weft runs one thread per block, the same results
    whenever the threads of a block all run the same code (tile ops are the block's, computed
    once; plain stores write the same values), which holds unless the kernel reads its
    thread's lane (tid()'s last index, tile(x), untile, block_dim()) or updates memory
    atomically outside tile ops. Such kernels are refused."""
    ops = _kernel_ops(kernel, params)
    inside = _inside_tile_ops(ops)
    reason = None
    for op in ops:
        if op.attrs.get("per_lane"):
            reason = ("it depends on the block's threads (tile(x), untile, tile_from_thread, block_dim(), "
                      "tile stacks, random tiles or scatters)")
        elif op.name == "tid" and op.attrs["of"] > grid_ndim:
            reason = "it reads its thread's index within the block (the last index of tid())"
        elif op.name == "atomic" and id(op) not in inside:
            reason = "it updates memory atomically outside tile operations (once per thread in Warp)"
        if reason:
            raise NotImplementedError(
                f"launch_tiled: kernel '{kernel.name}' with block_dim={block_dim} and config.enable_cpu_blocks: "
                f"weft runs one thread per CPU block, which differs from Warp's cooperative CPU blocks here "
                f"because {reason}; launch it without enable_cpu_blocks")
