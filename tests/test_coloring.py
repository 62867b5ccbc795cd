"""Graph coloring (weft/coloring.py, wp.utils.graph_coloring_*): valid colorings by both
algorithms on random graphs and a lattice, the color counts of chordal and bipartite graphs,
balancing (validity kept, ratio not worse, its stopping rules), groups, and the errors, both
from the Python functions and from runtime.core's entry points."""

import ctypes

import numpy as np
import pytest

import weft as wp
from weft._src.context import runtime

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
