"""The Tape as Warp programs use it: `gradients` and `get_adjoint`, scopes, `visualize`
(scopes as clusters, repeated launches summarised), `record_func` arguments."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def dot(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(z, 0, x[i] * y[i])


def _arrays():
    x = wp.array(np.full(4, 2.0, np.float32), requires_grad=True)
    y = wp.array(np.full(4, 3.0, np.float32), requires_grad=True)
    return x, y, wp.zeros(1, requires_grad=True)


def test_gradients_maps_each_argument_to_its_adjoint():
    x, y, z = _arrays()
    with wp.Tape() as tape:
        wp.launch(dot, 4, inputs=[x, y], outputs=[z])
    tape.backward(loss=z)
    assert tape.gradients[x] is x.grad and tape.gradients[y] is y.grad
    np.testing.assert_array_equal(tape.gradients[x].numpy(), 3.0)
    assert tape.get_adjoint(x) is x.grad
    assert tape.get_adjoint(2.0) is None and tape.get_adjoint(wp.zeros(2)) is None  # no gradient
    tape.reset()
    assert not x.grad.numpy().any() and tape.launches == [] and tape.scopes == []


def test_scopes_nest_and_empty_ones_are_dropped():
    x, y, z = _arrays()
    tape = wp.Tape()
    with tape:
        tape.record_scope_begin("outer", {"type": "scope"})
        tape.record_scope_begin("empty")
        tape.record_scope_end()  # nothing recorded in it: dropped
        wp.launch(dot, 4, inputs=[x, y], outputs=[z])
        tape.record_scope_end()
    assert tape.scopes == [(0, "outer", {"type": "scope"}), (1, None, None)]
    with pytest.raises(RuntimeError, match="ended tape scope, but scope not present"):
        tape.record_scope_end()


def test_visualize_groups_scopes_and_repeated_launches(tmp_path):
    x, y, z = _arrays()
    tape = wp.Tape()
    with tape:
        tape.record_scope_begin("my loop")
        for _ in range(5):
            wp.launch(dot, 4, inputs=[x, y], outputs=[z])
        tape.record_scope_end()
    text = tape.visualize(simplify_graph=True)
    assert "subgraph cluster_0" in text and 'label="my loop"' in text
    assert "dot (repeated 5x)" in text and text.count("dot") == 1
    assert "array: dtype=float32" in text
    full = tape.visualize(simplify_graph=False, ignore_graph_scopes=True)
    assert full.count('label="dot"') == 5 and "cluster" not in full
    hidden = tape.visualize(hide_readonly_arrays=True, array_labels={z: "loss"})
    assert 'label="loss"' in hidden and hidden.count("shape=ellipse") == 1  # x, y only read
    path = tmp_path / "tape.dot"
    assert tape.visualize(str(path)) == path.read_text()


def test_record_func_needs_arrays_with_gradients():
    tape = wp.Tape()
    with pytest.raises(RuntimeError, match="requires_grad=True"):
        tape.record_func(lambda: None, [wp.zeros(3)])
    with pytest.raises(RuntimeError, match="not a weft array"):
        tape.record_func(lambda: None, [np.zeros(3)])
    a = wp.zeros(3, requires_grad=True)
    tape.record_func(lambda: None, [a])
    assert tape.gradients[a] is a.grad
