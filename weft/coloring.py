"""Graph coloring for parallel constraint solving (Warp's `wp.utils.graph_coloring_assign`,
`graph_coloring_balance`, `graph_coloring_get_groups`): host code on numpy arrays.

Everything here transcribes Warp 1.19's native code (warp/native/coloring.cpp) step for step,
so a coloring, balanced or not, is the one Warp computes on any graph. The graph is an edge
list; each node's neighbours are listed in edge order (an edge (a, b) adds b to a's list and a
to b's). A greedy coloring gives each node in turn the smallest color none of its already
colored neighbours has (the first node gets color 0). Two ways to order the nodes:
- MCS, maximum cardinality search: repeatedly take the unvisited node with the most visited
  neighbours, from Warp's weight buckets (see `_mcs_order`: ties are not first come, first
  served); a new connected component starts at its lowest-numbered node;
- GREEDY: by decreasing degree, sorted as libstdc++'s (unstable) std::sort orders it
  (`_std_sort`), which is what Warp's Linux library runs.
Balancing then moves one node at a time into the smallest color group (the first smallest),
from the largest (the first largest) if one of its nodes can move there (the first in the
group's order), else from another group (in color order), and stops at the target max/min
ratio, when the largest and smallest groups differ by 2 nodes or fewer, when no node can
move, at the iteration limit, or when a move made the ratio worse (that move is undone).
Group order after a move: the last node of the source group takes the moved node's place,
and the moved node goes to the end of its new group.

Self-loops: Warp's adjacency builder stores a self-loop (a, a) once although it counts 2 to
a's degree, leaving a -1 entry at the end of a's list. MCS skips it (after printing "The
node_idx -1 is out of range!"); the greedy coloring and balancing read the int before the
color array for it, which is 0 on glibc (the high half of malloc's chunk size), so a node
with a self-loop never takes color 0 after the first node, nor moves to it. weft does the same.

The `native_*` functions take the arrays as kernel descriptors (`array.__ctype__()`) and
raise ColoringError with the message Warp's native library records; `runtime.core` (in
weft/_src/context.py) turns that into Warp's sentinel and error string.
"""

from __future__ import annotations

import ctypes
import enum
import operator
import sys

import numpy as np

from .logger import log_warning


class GraphColoringAlgorithm(enum.IntEnum):
    """Node order for `graph_coloring_assign` (see the module docstring)."""

    MCS = 0
    GREEDY = 1


class ColoringError(Exception):
    """A failure with the message Warp's native library would record."""


def _adjacency(num_nodes: int, edges: np.ndarray) -> tuple[list[list[int]], list[int]]:
    """(each node's neighbours in edge order, each node's self-loop count); a self-loop lists
    the node once, as Warp's builder does (see the module docstring)."""
    bad = np.nonzero(((edges < 0) | (edges >= num_nodes)).any(axis=1))[0] if len(edges) else ()
    if len(bad):
        e = int(bad[0])
        raise ColoringError(f"Graph edge {e} has endpoints ({int(edges[e, 0])}, {int(edges[e, 1])}), but valid node "
                            f"indices are in the range [0, {num_nodes}).")
    if not len(edges):
        return [[] for _ in range(num_nodes)], [0] * num_nodes
    # entries (a -> b, b -> a) per edge, grouped by node in edge order; a self-loop keeps one
    src, dst = edges.ravel(), edges[:, ::-1].ravel()
    keep = np.ones(len(src), dtype=bool)
    keep[1::2] = edges[:, 0] != edges[:, 1]
    src, dst = src[keep], dst[keep]
    order = np.argsort(src, kind="stable")
    offsets = np.searchsorted(src[order], np.arange(num_nodes + 1)).tolist()
    flat = dst[order].tolist()
    neighbours = [flat[offsets[i]:offsets[i + 1]] for i in range(num_nodes)]
    loops = np.bincount(edges[~keep[1::2], 0], minlength=num_nodes).tolist()
    return neighbours, loops


def _greedy(order, neighbours, loops) -> tuple[list[int], int]:
    """Warp's graph_coloring_ordered_greedy."""
    colors = [-1] * len(neighbours)
    count = 0
    for node in order:
        if count == 0:  # the first node: color 0, whatever its neighbours
            colors[node] = 0
            count = 1
            continue
        taken = {colors[n] for n in neighbours[node]}
        if loops[node]:
            taken.add(0)  # the -1 neighbour reads color 0
        color = next(c for c in range(count + 1) if c not in taken)
        colors[node] = color
        count = max(count, color + 1)
    return colors, count


def _mcs_order(neighbours, loops) -> list[int]:
    """Warp's graph_coloring_mcs_vector node order, with its NodeWeightBuckets: bucket w
    lists the unvisited nodes with w visited neighbours (a node with none is in no bucket,
    except a component's first node in bucket 0). Taking a node from the top bucket takes
    its first entry and moves the bucket's last entry into that slot; a node whose weight
    grows leaves its bucket the same way (the last entry fills its slot) and is appended to
    the next bucket."""
    n = len(neighbours)
    weight = [0] * n  # -1 once visited
    slot = [-1] * n  # the node's index in its bucket
    buckets: list[list[int]] = [[]]
    top = 0  # the highest non-empty bucket (or 0)
    order = []
    next_start = 0

    def add(node: int, w: int) -> None:
        nonlocal top
        if w == len(buckets):
            buckets.append([])
        bucket = buckets[w]
        slot[node] = len(bucket)
        weight[node] = w
        bucket.append(node)
        top = max(top, w)

    add(0, 0)
    for _ in range(n):
        if top <= 0 and not buckets[0]:  # start a new component at its lowest unvisited node
            while weight[next_start] < 0:
                next_start += 1
            add(next_start, 0)
        bucket = buckets[top]
        node = bucket[0]
        slot[node] = -1
        last = bucket.pop()
        if bucket:
            bucket[0] = last
            slot[last] = 0
        weight[node] = -1
        while top > 0 and not buckets[top]:
            top -= 1
        order.append(node)
        for m in neighbours[node]:
            w = weight[m]
            if w == 0:
                add(m, 1)
            elif w > 0:
                bucket = buckets[w]
                last = bucket.pop()
                if last != m:
                    bucket[slot[m]] = last
                    slot[last] = slot[m]
                add(m, w + 1)
        for _ in range(loops[node]):
            sys.stderr.write("The node_idx -1 is out of range!\n")  # Warp's fprintf for the -1 entry
    return order


# ---- libstdc++'s std::sort ----------------------------------------------------------------------

_SORT_THRESHOLD = 16  # libstdc++'s _S_threshold


def _std_sort(a: list, key, depth_limit: int | None = None) -> None:
    """Sort `a` in place exactly as libstdc++'s std::sort(first, last, comp) does with
    comp(x, y) = key[x] < key[y] (bits/stl_algo.h and stl_heap.h, GCC 4.9 to 14).

    Warp's GREEDY coloring orders the nodes with std::sort, which is not stable, so nodes of
    equal degree come out in introsort's order; reproducing that order is the only way to get
    Warp's colors. Introsort: quicksort (pivot: median of a[first+1], a[mid], a[last-1] moved
    to a[first]; unguarded partition) down to ranges of 16 or fewer elements, heap sort for a
    range once the depth limit 2*floor(log2(n)) is used up, then one insertion sort over all.
    `depth_limit` overrides that limit (for tests)."""
    if not a:
        return
    if depth_limit is None:
        depth_limit = 2 * (len(a).bit_length() - 1)  # 2 * std::__lg(n)
    _introsort_loop(a, key, 0, len(a), depth_limit)
    # std::__final_insertion_sort: a guarded insertion sort of the first 16, then unguarded
    if len(a) > _SORT_THRESHOLD:
        _insertion_sort(a, key, 0, _SORT_THRESHOLD)
        for i in range(_SORT_THRESHOLD, len(a)):
            _unguarded_linear_insert(a, key, i)
    else:
        _insertion_sort(a, key, 0, len(a))


def _introsort_loop(a: list, key, first: int, last: int, depth_limit: int) -> None:
    """std::__introsort_loop (with std::__unguarded_partition_pivot inlined)."""
    while last - first > _SORT_THRESHOLD:
        if depth_limit == 0:
            _heap_sort(a, key, first, last)  # std::__partial_sort(first, last, last)
            return
        depth_limit -= 1
        # std::__move_median_to_first(first, first + 1, mid, last - 1)
        i, j, k = first + 1, first + (last - first) // 2, last - 1
        ki, kj, kk = key[a[i]], key[a[j]], key[a[k]]
        if ki < kj:
            m = j if kj < kk else (k if ki < kk else i)
        else:
            m = i if ki < kk else (k if kj < kk else j)
        a[first], a[m] = a[m], a[first]
        # std::__unguarded_partition(first + 1, last, pivot = first)
        pivot = key[a[first]]
        lo, hi = first + 1, last
        while True:
            while key[a[lo]] < pivot:
                lo += 1
            hi -= 1
            while pivot < key[a[hi]]:
                hi -= 1
            if not lo < hi:
                break
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1
        _introsort_loop(a, key, lo, last, depth_limit)
        last = lo


def _insertion_sort(a: list, key, first: int, last: int) -> None:
    """std::__insertion_sort."""
    for i in range(first + 1, last):
        v = a[i]
        if key[v] < key[a[first]]:
            a[first + 1:i + 1] = a[first:i]
            a[first] = v
        else:
            _unguarded_linear_insert(a, key, i)


def _unguarded_linear_insert(a: list, key, last: int) -> None:
    """std::__unguarded_linear_insert."""
    v = a[last]
    kv = key[v]
    while kv < key[a[last - 1]]:
        a[last] = a[last - 1]
        last -= 1
    a[last] = v


def _heap_sort(a: list, key, first: int, last: int) -> None:
    """std::__partial_sort(first, last, last): std::__make_heap, then std::__sort_heap."""
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(a, key, first, parent, n, a[first + parent])
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:  # std::__pop_heap(first, last, last) per step
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, key, first, 0, last - first, value)


def _adjust_heap(a: list, key, first: int, hole: int, n: int, value) -> None:
    """std::__adjust_heap (a max-heap of a[first:first+n]) with its std::__push_heap."""
    top = child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if key[a[first + child]] < key[a[first + child - 1]]:
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    kv = key[value]
    parent = (hole - 1) // 2
    while hole > top and key[a[first + parent]] < kv:
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def color_graph(num_nodes: int, edges: np.ndarray, algorithm: int) -> tuple[np.ndarray, int]:
    """(node colors, color count) of the graph, by `algorithm` (a GraphColoringAlgorithm)."""
    if num_nodes == 0:
        raise ColoringError("Empty graph!")
    neighbours, loops = _adjacency(num_nodes, edges)
    if algorithm == GraphColoringAlgorithm.MCS:
        order = _mcs_order(neighbours, loops)
    elif algorithm == GraphColoringAlgorithm.GREEDY:
        # Warp: std::sort(iota, [&](l, r) { return degrees[l] > degrees[r]; }), a self-loop counting 2
        order = list(range(num_nodes))
        _std_sort(order, [-len(nb) - loops[node] for node, nb in enumerate(neighbours)])
    else:
        raise ColoringError(f"Unrecognized coloring algorithm number: {algorithm}!")
    colors, count = _greedy(order, neighbours, loops)
    return np.array(colors, dtype=np.int32), count


def _ratio(groups) -> tuple[np.float32, int, int]:
    """(max/min group size ratio as a C float, the first largest group, the first smallest)."""
    sizes = [len(g) for g in groups]
    big, small = sizes.index(max(sizes)), sizes.index(min(sizes))
    if sizes[small] == 0:  # float division by zero: inf, or nan for 0 / 0
        return np.float32(np.inf if sizes[big] else np.nan), big, small
    return np.float32(sizes[big]) / np.float32(sizes[small]), big, small


def balance_colors(num_nodes: int, edges: np.ndarray, colors: np.ndarray, color_count: int,
                   target: float, max_iterations: int) -> tuple[float, bool]:
    """Balance `colors` in place as Warp's balance_color_groups does; (max/min group size
    ratio, whether the iteration limit stopped it)."""
    if num_nodes < 0:
        raise ColoringError(f"The num_nodes value must be non-negative, got {num_nodes}!")
    if max_iterations < 0:
        raise ColoringError(f"The max_iterations value must be non-negative, got {max_iterations}!")
    neighbours, loops = _adjacency(num_nodes, edges)
    if color_count <= 1:
        return 1.0, False
    work = colors.tolist()
    groups: list[list[int]] = [[] for _ in range(color_count)]
    for node, c in enumerate(work):
        if not 0 <= c < color_count:
            raise ColoringError(f"Node {node} has color {c}, but valid colors are in the range [0, {color_count}).")
        groups[c].append(node)
    ratio, limited = _balance(neighbours, loops, work, groups, np.float32(target), max_iterations)
    colors[:] = work
    return ratio, limited


def _balance(neighbours, loops, colors: list[int], groups: list[list[int]], target: np.float32,
             max_iterations: int) -> tuple[float, bool]:
    """Warp's balance_color_groups on `colors` (a list, changed in place) and its groups."""
    ratio, last_move, iteration = np.float32(-1.0), None, 0
    # blocked[node][c]: how many of node's neighbours have color c (a self-loop's -1 neighbour
    # reads color 0, see the module docstring); a node can move to c when that is 0
    blocked = [[0] * len(groups) for _ in colors]
    for node, nb in enumerate(neighbours):
        row = blocked[node]
        for m in nb:
            if m != node:
                row[colors[m]] += 1
        row[0] += loops[node]

    def movable(group: list[int], color: int) -> int:
        return next((i for i, node in enumerate(group) if not blocked[node][color]), -1)

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
            for c in range(len(groups)):
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
        for m in neighbours[node]:
            if m != node:
                blocked[m][source] -= 1
                blocked[m][small] += 1
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
