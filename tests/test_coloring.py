"""Graph coloring (weft/coloring.py, wp.utils.graph_coloring_*): valid colorings by both
algorithms on random graphs and a lattice, the color counts of chordal and bipartite graphs,
Warp 1.19's exact colorings and balancing on graphs where the node order matters (MCS bucket
order, libstdc++'s unstable std::sort, self-loops), the std::sort transcription against orders
recorded from g++, balancing (validity kept, ratio not worse, its stopping rules), groups, and
the errors, both from the Python functions and from runtime.core's entry points."""

import ctypes

import numpy as np
import pytest

import weft as wp
from weft._src.context import runtime
from weft.coloring import _std_sort

ALGORITHMS = (wp.utils.GraphColoringAlgorithm.MCS, wp.utils.GraphColoringAlgorithm.GREEDY)


def edges_array(pairs):
    return wp.array(np.asarray(pairs, dtype=np.int32).reshape(-1, 2), dtype=wp.int32, device="cpu")


def conflicts(pairs, colors):
    pairs = np.asarray(pairs).reshape(-1, 2)
    return int(np.sum(colors[pairs[:, 0]] == colors[pairs[:, 1]]))


def random_graph(n, m, seed):
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, n, size=(m, 2))
    return pairs[pairs[:, 0] != pairs[:, 1]]


def lattice_with_diagonals(k):
    idx = np.arange(k * k).reshape(k, k)
    pairs = [np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1), np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1),
             np.stack([idx[:-1, :-1].ravel(), idx[1:, 1:].ravel()], 1),
             np.stack([idx[:-1, 1:].ravel(), idx[1:, :-1].ravel()], 1)]
    return np.concatenate(pairs)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_colorings_are_valid_and_count_their_colors(algorithm, seed):
    pairs = random_graph(300, 1200, seed)
    colors = wp.empty(300, dtype=wp.int32, device="cpu")
    count = wp.utils.graph_coloring_assign(edges_array(pairs), colors, algorithm)
    c = colors.numpy()
    assert conflicts(pairs, c) == 0
    assert c.min() == 0 and c.max() == count - 1 and len(np.unique(c)) == count
    degree = np.bincount(pairs.ravel(), minlength=300)
    assert count <= degree.max() + 1  # a greedy coloring never needs more


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_cycles_and_a_lattice_get_few_colors(algorithm):
    for pairs, expected in (([[0, 1], [1, 2], [2, 0]], 3), ([[0, 1], [1, 2], [2, 3], [3, 0]], 2)):
        colors = wp.empty(len(pairs), dtype=wp.int32, device="cpu")
        assert wp.utils.graph_coloring_assign(edges_array(pairs), colors, algorithm) == expected
    pairs = lattice_with_diagonals(30)  # king's graph: 4 colors are enough (and needed)
    colors = wp.empty(900, dtype=wp.int32, device="cpu")
    count = wp.utils.graph_coloring_assign(edges_array(pairs), colors, wp.utils.GraphColoringAlgorithm.MCS)
    assert conflicts(pairs, colors.numpy()) == 0 and count == 4


def probe_grid(k):
    """k x k nodes, per node (row-major) the edges right, down, and both diagonals of its cell."""
    pairs = []
    for j in range(k):
        for i in range(k):
            n = j * k + i
            if i + 1 < k:
                pairs.append([n, n + 1])
            if j + 1 < k:
                pairs.append([n, n + k])
            if i + 1 < k and j + 1 < k:
                pairs += [[n, n + k + 1], [n + 1, n + k]]
    return pairs


def assign_and_balance(pairs, n, algorithm, target):
    edges, colors = edges_array(pairs), wp.empty(n, dtype=wp.int32, device="cpu")
    count = wp.utils.graph_coloring_assign(edges, colors, algorithm)
    assigned = colors.numpy().tolist()
    ratio = wp.utils.graph_coloring_balance(edges, colors, count, target)
    return count, assigned, ratio, colors.numpy().tolist()


# The expected colorings below were recorded from Warp 1.19.0 (warp.utils on Linux x86-64).
WARP_GRID6_MCS = [0, 1, 0, 1, 0, 3, 2, 3, 2, 3, 2, 1, 1, 0, 1, 0, 4, 0, 3, 2, 3, 2, 1, 2, 1, 0, 1, 0, 3, 0, 3, 2, 3,
                  2, 1, 2]
WARP_GRID6_MCS_BALANCED = [4, 1, 0, 4, 0, 3, 2, 3, 2, 3, 2, 1, 1, 0, 1, 0, 4, 0, 3, 4, 3, 2, 1, 2, 1, 0, 1, 4, 3, 4, 3,
                           2, 3, 2, 1, 2]
WARP_GRID6_GREEDY = [3, 2, 4, 3, 0, 3, 0, 1, 0, 2, 1, 2, 4, 2, 4, 3, 0, 3, 3, 0, 1, 2, 1, 2, 1, 2, 3, 0, 3, 0, 3, 0,
                     1, 2, 1, 2]
WARP_GRID6_GREEDY_BALANCED = [4, 2, 4, 3, 0, 3, 0, 1, 0, 2, 1, 4, 4, 2, 4, 3, 0, 3, 3, 0, 1, 2, 1, 2, 1, 2, 3, 4, 3, 0,
                              3, 0, 1, 2, 1, 2]


def test_the_probe_grid_gets_warps_colorings():
    # MCS: Warp's weight buckets are not first come, first served (the old model gave 4 colors)
    algorithms = wp.utils.GraphColoringAlgorithm
    count, assigned, ratio, balanced = assign_and_balance(probe_grid(6), 36, algorithms.MCS, 1.0)
    assert (count, assigned) == (5, WARP_GRID6_MCS)
    assert ratio == pytest.approx(4 / 3) and balanced == WARP_GRID6_MCS_BALANCED
    # GREEDY: 36 nodes of degrees 3, 5 and 8 ordered by std::sort, not by a stable sort
    count, assigned, ratio, balanced = assign_and_balance(probe_grid(6), 36, algorithms.GREEDY, 1.0)
    assert (count, assigned) == (5, WARP_GRID6_GREEDY)
    assert ratio == pytest.approx(4 / 3) and balanced == WARP_GRID6_GREEDY_BALANCED


def test_greedy_orders_ties_as_std_sort_does():
    greedy = wp.utils.GraphColoringAlgorithm.GREEDY
    ring = [[i, (i + 1) % 20] for i in range(20)]  # 20 nodes of degree 2: a stable order needs 2 colors
    c = wp.empty(20, dtype=wp.int32, device="cpu")
    assert wp.utils.graph_coloring_assign(edges_array(ring), c, greedy) == 3
    assert c.numpy().tolist() == [1, 2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 1, 0, 1, 0, 1, 0, 1, 0]  # Warp 1.19
    grid = [[n, n + 1] for n in range(20) if n % 5 != 4] + [[n, n + 5] for n in range(15)]  # 5 x 4, bipartite
    c = wp.empty(20, dtype=wp.int32, device="cpu")
    assert wp.utils.graph_coloring_assign(edges_array(grid), c, greedy) == 3
    assert c.numpy().tolist() == [0, 1, 2, 0, 1, 1, 0, 1, 2, 0, 0, 1, 2, 0, 1, 1, 2, 0, 1, 0]  # Warp 1.19
    assert conflicts(grid, c.numpy()) == 0


def test_self_loops_block_color_0_as_in_warp():
    # Warp reads the int before its color array (0 on glibc) for a self-loop's missing neighbour
    pairs = [[0, 1], [0, 3], [2, 2]]
    for algorithm in ALGORITHMS:
        c = wp.empty(4, dtype=wp.int32, device="cpu")
        assert wp.utils.graph_coloring_assign(edges_array(pairs), c, algorithm) == 2
        assert c.numpy().tolist() == [0, 1, 1, 1]  # Warp 1.19
    c = wp.array([0, 1, 1, 1, 1, 1, 1], dtype=wp.int32, device="cpu")
    ratio = wp.utils.graph_coloring_balance(edges_array([[1, 1]]), c, 2, 1.0)
    assert ratio == pytest.approx(4 / 3) and c.numpy().tolist() == [0, 1, 0, 1, 1, 1, 0]  # Warp 1.19


# Orders printed by a g++ 12 program running std::sort(iota(n), [&](l, r) { return degrees[l] > degrees[r]; })
# (Warp's GREEDY comparator), or, with a depth limit, std::__introsort_loop(..., limit, comp) followed by
# std::__final_insertion_sort (the heap-sort fallback).
STD_SORT_CASES = [
    ([2] * 20, None, [10, 19, 18, 17, 16, 15, 14, 13, 12, 11, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1]),
    ([1] * 17, None, [8, 16, 15, 14, 13, 12, 11, 10, 9, 0, 7, 6, 5, 4, 3, 2, 1]),
    ([3, 1, 2, 3, 3, 1, 2, 2, 3, 1, 1, 2, 3, 3, 1, 2, 1, 3, 2, 2, 3, 1, 1, 2, 3, 2, 1, 3, 3, 2], None,
     [8, 17, 0, 13, 12, 20, 24, 27, 4, 3, 28, 25, 15, 23, 19, 18, 29, 11, 7, 6, 2, 16, 14, 10, 21, 22, 9, 26, 5, 1]),
    ([1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0], 0,
     [8, 21, 9, 17, 5, 3, 19, 22, 11, 0, 13, 2, 14, 15, 7, 16, 18, 20, 1, 4, 10, 23, 12, 6]),
    ([(i * 7) % 5 for i in range(40)], None,
     [17, 2, 37, 22, 7, 32, 27, 12, 9, 24, 14, 29, 19, 34, 4, 39, 21, 1, 26, 31, 36, 16, 11, 6, 18, 23, 38, 13, 28, 3,
      8, 33, 0, 20, 5, 35, 10, 30, 15, 25]),
    ([(i * 7) % 5 for i in range(40)], 2,
     [17, 37, 22, 7, 12, 2, 27, 32, 24, 9, 39, 4, 19, 29, 34, 14, 21, 1, 26, 31, 36, 16, 11, 6, 18, 23, 38, 13, 28, 3,
      8, 33, 0, 20, 5, 35, 10, 30, 15, 25]),
]


@pytest.mark.parametrize("degrees, depth_limit, expected", STD_SORT_CASES)
def test_std_sort_matches_libstdcxx(degrees, depth_limit, expected):
    order = list(range(len(degrees)))
    _std_sort(order, [-d for d in degrees], depth_limit)
    assert order == expected


def test_std_sort_sorts():
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 16, 17, 100, 1000):
        for depth_limit in (None, 0, 1, 3):
            keys = rng.integers(0, 4, n).tolist()
            order = list(range(n))
            _std_sort(order, keys, depth_limit)
            assert sorted(order) == list(range(n)) and [keys[i] for i in order] == sorted(keys)


def test_balance_keeps_the_coloring_valid_and_evens_the_groups():
    pairs = random_graph(400, 800, 5)
    edges = edges_array(pairs)
    colors = wp.empty(400, dtype=wp.int32, device="cpu")
    count = wp.utils.graph_coloring_assign(edges, colors, wp.utils.GraphColoringAlgorithm.GREEDY)
    sizes = np.bincount(colors.numpy(), minlength=count)
    before = sizes.max() / sizes.min()
    ratio = wp.utils.graph_coloring_balance(edges, colors, count, 1.1)
    c = colors.numpy()
    sizes = np.bincount(c, minlength=count)
    assert conflicts(pairs, c) == 0 and len(sizes) == count
    assert ratio == pytest.approx(sizes.max() / sizes.min()) and ratio < before


def test_balance_moves_into_the_smallest_group_and_stops_at_the_limit(capsys):
    # no edges: every move is legal; 6 nodes of color 0, 1 of color 1
    colors = wp.array([0, 0, 0, 0, 0, 0, 1], dtype=wp.int32, device="cpu")
    ratio = wp.utils.graph_coloring_balance(edges_array([]), colors, 2, 1.0, max_iterations=1)
    assert colors.numpy().tolist() == [1, 0, 0, 0, 0, 0, 1] and ratio == pytest.approx(2.5)
    assert "reached the 1-iteration limit (achieved ratio 2.5, target 1)" in capsys.readouterr().err
    # a node joined to every node of the smallest group cannot move there
    colors = wp.array([0, 0, 0, 0, 1], dtype=wp.int32, device="cpu")
    pairs = [[n, 4] for n in range(4)]
    ratio = wp.utils.graph_coloring_balance(edges_array(pairs), colors, 2, 1.0)
    assert colors.numpy().tolist() == [0, 0, 0, 0, 1] and ratio == pytest.approx(4.0)


def test_groups_list_each_colors_nodes():
    colors = wp.array([2, 0, 1, 0, 2, 2], dtype=wp.int32, device="cpu")
    groups = wp.utils.graph_coloring_get_groups(colors, 3, return_wp_array=False)
    assert [g.tolist() for g in groups] == [[1, 3], [2], [0, 4, 5]]
    groups = wp.utils.graph_coloring_get_groups(colors, 3)
    assert [g.numpy().tolist() for g in groups] == [[1, 3], [2], [0, 4, 5]] and groups[0].dtype == wp.int32
    assert wp.utils.graph_coloring_get_groups(colors, 0) == ()


def test_errors():
    colors = wp.empty(2, dtype=wp.int32, device="cpu")
    with pytest.raises(RuntimeError, match=r"Graph edge 0 has endpoints \(0, 2\).*\[0, 2\)"):
        wp.utils.graph_coloring_assign(edges_array([[0, 2]]), colors)
    with pytest.raises(RuntimeError, match="dtype int32"):
        wp.utils.graph_coloring_assign(wp.zeros((1, 2), dtype=wp.int64, device="cpu"), colors)
    with pytest.raises(RuntimeError, match=r"shape \(edge_count, 2\)"):
        wp.utils.graph_coloring_assign(wp.zeros((1, 3), dtype=wp.int32, device="cpu"), colors)
    with pytest.raises(RuntimeError, match="empty graph"):
        wp.utils.graph_coloring_assign(edges_array([]), wp.empty(0, dtype=wp.int32, device="cpu"))
    bad = wp.array([0, 5], dtype=wp.int32, device="cpu")
    with pytest.raises(RuntimeError, match=r"Node 1 has color 5, but valid colors are in the range \[0, 2\)"):
        wp.utils.graph_coloring_balance(edges_array([[0, 1]]), bad, 2, 1.1)
    assert bad.numpy().tolist() == [0, 5]
    with pytest.raises(ValueError, match="non-negative"):
        wp.utils.graph_coloring_balance(edges_array([[0, 1]]), colors, 2, 1.1, max_iterations=-1)
    with pytest.raises(TypeError, match="integer or None"):
        wp.utils.graph_coloring_balance(edges_array([[0, 1]]), colors, 2, 1.1, max_iterations=1.5)


def test_native_entry_points_report_through_the_error_string():
    core = runtime.core
    edges, colors = edges_array([[0, 1], [1, 2]]), wp.empty(3, dtype=wp.int32, device="cpu")
    assert core.wp_graph_coloring(3, edges.__ctype__(), 0, colors.__ctype__()) == 2
    assert colors.numpy()[1] != colors.numpy()[0] and colors.numpy()[1] != colors.numpy()[2]
    assert core.wp_graph_coloring(3, edges.__ctype__(), 7, colors.__ctype__()) == -1
    assert runtime.get_error_string() == "Unrecognized coloring algorithm number: 7!"
    flag = ctypes.c_int(5)
    ratio = core.wp_balance_coloring(3, edges.__ctype__(), 2, 1.1, 0, colors.__ctype__(), ctypes.byref(flag))
    assert ratio == pytest.approx(2.0) and flag.value == 0  # groups differ by 1: nothing to do
    assert core.wp_balance_coloring(-1, edges.__ctype__(), 2, 1.1, 0, colors.__ctype__(), None) == -1.0
    assert runtime.get_error_string() == "The num_nodes value must be non-negative, got -1!"
