"""Graph coloring for parallel constraint solving (Warp's `wp.utils.graph_coloring_assign`,
`graph_coloring_balance`, `graph_coloring_get_groups`): host code on numpy arrays.

The graph is an edge list; each node's neighbours are listed in edge order (an edge (a, b)
adds b to a's list and a to b's). Two ways to order the nodes for a greedy coloring (each node
gets the smallest color none of its already colored neighbours has):
- MCS, maximum cardinality search: repeatedly take the unvisited node with the most visited
  neighbours (ties: the one that reached that count first; a new connected component starts
  at its lowest-numbered node);
- GREEDY: by decreasing degree (ties: lower node number first).
Balancing then moves one node at a time into the smallest color group, from the largest
group if one of its nodes can move there (the first in the group's order), else from another
group (in color order), and stops at the target max/min ratio, when the largest and smallest
groups differ by 2 nodes or fewer, when no node can move, at the iteration limit, or when a
move made the ratio worse (that move is undone). These are Warp's rules, so a balanced
coloring is the one Warp computes; group order after a move: the last node of the source
group takes the moved node's place, and the moved node goes to the end of its new group.

The `native_*` functions take the arrays as kernel descriptors (`array.__ctype__()`) and
raise ColoringError with the message Warp's native library records; `runtime.core` (in
weft/_src/context.py) turns that into Warp's sentinel and error string.
"""

from __future__ import annotations

import ctypes
import enum
import operator

import numpy as np

from .logger import log_warning


class GraphColoringAlgorithm(enum.IntEnum):
    """Node order for `graph_coloring_assign` (see the module docstring)."""

    MCS = 0
    GREEDY = 1


class ColoringError(Exception):
    """A failure with the message Warp's native library would record."""


def _adjacency(num_nodes: int, edges: np.ndarray) -> list[list[int]]:
    bad = np.nonzero(((edges < 0) | (edges >= num_nodes)).any(axis=1))[0] if len(edges) else ()
    if len(bad):
        e = int(bad[0])
        raise ColoringError(f"Graph edge {e} has endpoints ({int(edges[e, 0])}, {int(edges[e, 1])}), but valid node "
                            f"indices are in the range [0, {num_nodes}).")
    neighbours: list[list[int]] = [[] for _ in range(num_nodes)]
    for a, b in edges.tolist():
        neighbours[a].append(b)
        neighbours[b].append(a)
    return neighbours


def _greedy(order, neighbours) -> tuple[list[int], int]:
    colors = [-1] * len(neighbours)
    count = 0
    for node in order:
        taken = {colors[n] for n in neighbours[node]}
        color = next(c for c in range(count + 1) if c not in taken)
        colors[node] = color
        count = max(count, color + 1)
    return colors, count


def _mcs_order(neighbours) -> list[int]:
    n = len(neighbours)
    weight = [0] * n
    visited = [False] * n
    buckets: list[dict] = [{}]  # weight -> nodes (insertion-ordered) with that weight
    order = []
    next_start = 0
    top = -1
    for _ in range(n):
        while top >= 0 and not buckets[top]:
            top -= 1
        if top < 1:  # nothing reached from the visited nodes: start a new component
            while visited[next_start]:
                next_start += 1
            node = next_start
            buckets[weight[node]].pop(node, None)
        else:
            node = next(iter(buckets[top]))
            del buckets[top][node]
        visited[node] = True
        order.append(node)
        for m in neighbours[node]:
            if visited[m]:
                continue
            buckets[weight[m]].pop(m, None)
            weight[m] += 1
            if weight[m] == len(buckets):
                buckets.append({})
            buckets[weight[m]][m] = True
            top = max(top, weight[m])
    return order


def color_graph(num_nodes: int, edges: np.ndarray, algorithm: int) -> tuple[np.ndarray, int]:
    """(node colors, color count) of the graph, by `algorithm` (a GraphColoringAlgorithm)."""
    if num_nodes == 0:
        raise ColoringError("Empty graph!")
    neighbours = _adjacency(num_nodes, edges)
    if algorithm == GraphColoringAlgorithm.MCS:
        order = _mcs_order(neighbours)
    elif algorithm == GraphColoringAlgorithm.GREEDY:
        degree = np.array([len(n) for n in neighbours])
        order = np.argsort(-degree, kind="stable").tolist()
    else:
        raise ColoringError(f"Unrecognized coloring algorithm number: {algorithm}!")
    colors, count = _greedy(order, neighbours)
    return np.array(colors, dtype=np.int32), count


def _ratio(groups) -> tuple[np.float32, int, int]:
    sizes = [len(g) for g in groups]
    big = max(range(len(sizes)), key=lambda c: (sizes[c], -c))
    small = min(range(len(sizes)), key=lambda c: (sizes[c], c))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float32(sizes[big]) / np.float32(sizes[small]), big, small


def balance_colors(num_nodes: int, edges: np.ndarray, colors: np.ndarray, color_count: int,
                   target: float, max_iterations: int) -> tuple[float, bool]:
    """Balance `colors` in place; (max/min group size ratio, whether the iteration limit
    stopped it)."""
    if num_nodes < 0:
        raise ColoringError(f"The num_nodes value must be non-negative, got {num_nodes}!")
    if max_iterations < 0:
        raise ColoringError(f"The max_iterations value must be non-negative, got {max_iterations}!")
    neighbours = _adjacency(num_nodes, edges)
    if color_count <= 1:
        return 1.0, False
    groups: list[list[int]] = [[] for _ in range(color_count)]
    for node, c in enumerate(colors.tolist()):
        if not 0 <= c < color_count:
            raise ColoringError(f"Node {node} has color {c}, but valid colors are in the range [0, {color_count}).")
        groups[c].append(node)
    target = np.float32(target)
    ratio, last_move, iteration = np.float32(-1.0), None, 0

    def movable(group: list[int], color: int) -> int:
        return next((i for i, node in enumerate(group) if all(colors[m] != color for m in neighbours[node])), -1)

    while True:
        previous = ratio
        ratio, big, small = _ratio(groups)
        if previous > 0 and previous < ratio:  # the last move made it worse: undo it
            node, color = last_move
            colors[node] = color
            return float(previous), False
        if len(groups[big]) - len(groups[small]) <= 2 or ratio <= target:
            return float(ratio), False
        source, index = big, movable(groups[big], small)
        if index < 0:
            for c in range(color_count):
                if c not in (big, small):
                    index = movable(groups[c], small)
                    if index >= 0:
                        source = c
                        break
        if index < 0:
            return float(ratio), False
        if iteration == max_iterations:
            return float(ratio), True
        group = groups[source]
        node = group[index]
        last_move = (node, source)
        colors[node] = small
        group[index] = group[-1]
        group.pop()
        groups[small].append(node)
        iteration += 1


# ---- the public functions (Warp's wp.utils names) -----------------------------------------------

def _check(name: str, a, ndim: int) -> None:
    from .types import int32
    if not a.device.is_cpu:
        raise RuntimeError(f"{name} array must be on the CPU")
    if a.dtype != int32:
        raise RuntimeError(f"{name} array must have dtype int32, got {getattr(a.dtype, '__name__', a.dtype)}")
    if a.ndim != ndim:
        raise RuntimeError(f"{name} array must be {ndim}-dimensional, got {a.ndim} dimensions")
    if name == "edges" and a.shape[1] != 2:
        raise RuntimeError(f"edges array must have shape (edge_count, 2), got shape {a.shape}")


def graph_coloring_assign(edges, node_colors, algorithm: GraphColoringAlgorithm = GraphColoringAlgorithm.MCS) -> int:
    """Color the nodes of the graph `edges` ((edge_count, 2) int32, CPU) so that no edge
    joins two nodes of one color; writes `node_colors` ((node_count,) int32, CPU) and returns
    the number of colors."""
    _check("edges", edges, 2)
    _check("node_colors", node_colors, 1)
    if node_colors.shape[0] == 0:
        raise RuntimeError("Cannot color an empty graph")
    try:
        colors, count = color_graph(node_colors.shape[0], edges.numpy(), int(algorithm))
    except ColoringError as e:
        raise RuntimeError(f"Graph coloring failed: {e}") from None
    node_colors.numpy()[:] = colors
    return count


def graph_coloring_balance(edges, node_colors, color_count: int, target_max_min_ratio: float, *,
                           max_iterations: int | None = None) -> float:
    """Move nodes between the color groups of `node_colors` (in place; the coloring stays
    valid) until the largest group is at most `target_max_min_ratio` times the smallest, no
    more progress is possible, or `max_iterations` nodes (default: the node count) have moved;
    returns the ratio reached (a warning when the iteration limit stopped it)."""
    _check("edges", edges, 2)
    _check("node_colors", node_colors, 1)
    node_count = node_colors.shape[0]
    if max_iterations is None:
        max_iterations = node_count
    else:
        if isinstance(max_iterations, (bool, np.bool_)):
            raise TypeError(f"max_iterations must be an integer or None, got {type(max_iterations).__name__}")
        try:
            max_iterations = operator.index(max_iterations)
        except TypeError:
            raise TypeError(f"max_iterations must be an integer or None, got {type(max_iterations).__name__}") from None
        if max_iterations < 0:
            raise ValueError(f"max_iterations must be non-negative, got {max_iterations}")
        if max_iterations > np.iinfo(np.int32).max:
            raise ValueError(f"max_iterations must not exceed {np.iinfo(np.int32).max}, got {max_iterations}")
    colors = node_colors.numpy().copy()
    try:
        ratio, limited = balance_colors(node_count, edges.numpy(), colors, int(color_count),
                                        target_max_min_ratio, max_iterations)
    except ColoringError as e:
        raise RuntimeError(f"Graph coloring balance failed: {e}") from None
    node_colors.numpy()[:] = colors
    if limited:
        log_warning(f"Graph coloring stopped because it reached the {max_iterations}-iteration limit "
                    f"(achieved ratio {ratio:g}, target {target_max_min_ratio:g}).", stacklevel=1)
    return ratio


def graph_coloring_get_groups(node_colors, color_count: int, return_wp_array: bool = True, device="cpu"):
    """The node indices of each color (a tuple of `color_count` arrays, increasing node
    order): weft arrays on `device`, or numpy arrays with `return_wp_array=False`."""
    if color_count < 0:
        raise RuntimeError("color_count must be non-negative")
    if color_count == 0:
        return ()
    _check("node_colors", node_colors, 1)
    colors = node_colors.numpy()
    order = np.argsort(colors, kind="stable").astype(np.int32)
    ends = np.searchsorted(colors[order], np.arange(color_count + 1), side="left")
    groups = tuple(order[ends[c]:ends[c + 1]] for c in range(color_count))
    if not return_wp_array:
        return groups
    from .runtime.array import array
    from .types import int32
    return tuple(array(g, dtype=int32, device=device) for g in groups)


# ---- Warp's native entry points (runtime.core.wp_graph_coloring, wp_balance_coloring) ----------

def _from_descriptor(desc) -> np.ndarray:
    """The int32 elements a kernel descriptor points at (a view; shape and byte strides)."""
    ndim = int(desc.ndim)
    shape = tuple(int(s) for s in desc.shape[:ndim])
    if not desc.data or 0 in shape:
        return np.zeros(shape, dtype=np.int32)
    strides = tuple(int(s) for s in desc.strides[:ndim])
    span = sum((n - 1) * s for n, s in zip(shape, strides)) + 4
    buffer = (ctypes.c_char * span).from_address(desc.data)
    return np.ndarray(shape, dtype=np.int32, buffer=buffer, strides=strides)


def native_graph_coloring(num_nodes: int, edges, algorithm: int, node_colors) -> int:
    colors = _from_descriptor(node_colors)
    if colors.ndim != 1 or colors.shape[0] != num_nodes:
        raise ColoringError("The node_colors array must have the preallocated shape of (num_nodes,)!")
    e = _from_descriptor(edges)
    if e.ndim != 2:
        raise ColoringError("The edges array must have 2 dimensions!")
    if num_nodes == 0:
        raise ColoringError("Empty graph!")
    if e.shape[1] != 2:
        raise ColoringError("The edges array must have shape (edge_count, 2)!")
    result, count = color_graph(num_nodes, e, algorithm)
    colors[:] = result
    return count


def native_balance_coloring(num_nodes: int, edges, num_colors: int, target: float, max_iterations: int,
                            node_colors, iteration_limit_reached=None) -> float:
    flag = iteration_limit_reached._obj if iteration_limit_reached is not None else None
    if flag is not None:
        flag.value = 0
    if num_nodes < 0:
        raise ColoringError(f"The num_nodes value must be non-negative, got {num_nodes}!")
    if max_iterations < 0:
        raise ColoringError(f"The max_iterations value must be non-negative, got {max_iterations}!")
    e = _from_descriptor(edges)
    if e.ndim != 2 or e.shape[1] != 2:
        raise ColoringError("The edges array must have shape (edge_count, 2)!")
    colors = _from_descriptor(node_colors)
    work = colors.copy()
    ratio, limited = balance_colors(num_nodes, e, work, num_colors, target, max_iterations)
    colors[:] = work
    if flag is not None and limited:
        flag.value = 1
    return ratio
