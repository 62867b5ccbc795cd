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
    assert tape.get_adjoint(wp.vec3(1.0, 2.0, 3.0)) == wp.vec3(0.0, 0.0, 0.0)  # a zero, as Warp gives
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
    calls = []
    tape.record_func(lambda: calls.append(1), [a])
    assert tape.gradients[a] is a.grad
    (step,) = tape.launches
    assert callable(step)  # (tools that walk a Warp tape call its function entries)
    step()
    assert calls == [1]


def test_record_launch_in_warps_form_records_without_running():
    x, y, z = _arrays()
    tape = wp.Tape()
    tape.record_launch(kernel=dot, dim=4, max_blocks=0, inputs=[x, y], outputs=[z], device="cpu")
    assert not z.numpy().any()  # nothing ran
    tape.backward(loss=z)
    np.testing.assert_array_equal(x.grad.numpy(), 3.0)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        tape.record_launch(dot, 4, inputs=[x], outputs=[z])


def test_recorded_launches_index_as_warps_lists():
    """[kernel, dim, max_blocks, inputs, outputs, device, block_dim, metadata], as tools that
    walk `tape.launches` read them; ending a tape that is not recording is Warp's RuntimeError."""
    x, y, z = _arrays()
    with wp.Tape() as tape:
        wp.launch(dot, 4, inputs=[x, y], outputs=[z])
    kernel, dim, _, inputs, outputs, device, _, _ = tape.launches[0]
    assert (kernel, dim, device) == (dot, (4,), "cpu") and inputs == [x, y] and outputs == [z]
    with pytest.raises(RuntimeError, match="tape not present"):
        wp.Tape().__exit__(None, None, None)


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_backward_refuses_a_loss_that_is_not_one_scalar_with_warps_exception_type():
    """Warp raises RuntimeError; weft's error is a ValueError too."""
    x = wp.array(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    v = wp.zeros(1, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, 3, inputs=[x], outputs=[y])
    for loss, match in ((y, "one scalar"), (v, "one scalar"), (wp.zeros(1), "requires_grad=True")):
        with pytest.raises(RuntimeError, match=match):
            tape.backward(loss)
        with pytest.raises(ValueError, match=match):
            tape.backward(loss)


def test_a_seed_that_does_not_cover_the_array_is_refused():
    x = wp.array(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, 3, inputs=[x], outputs=[y])
    for seed in (wp.ones(2), np.ones(4), [1.0, 2.0]):
        with pytest.raises(RuntimeError, match=r"the seed for an array of shape \(3,\) .* it needs 3"):
            tape.backward(grads={y: seed})
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)  # (nothing ran)


def test_a_seed_for_an_array_without_gradient_becomes_its_gradient():
    """backward(grads={a: seed}) with `a.grad` None makes `seed` a's gradient (Warp's rule),
    so the pass consumes the seed itself; an existing `.grad` receives a copy instead."""
    x = wp.array(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(3)  # no gradient buffer
    with wp.Tape() as tape:
        wp.launch(square, 3, inputs=[x], outputs=[y])
    seed = wp.array(np.array([1.0, 2.0, 0.5], np.float32))
    tape.backward(grads={y: seed})
    assert y.grad is seed
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -8.0, 3.0])
    np.testing.assert_array_equal(seed.numpy(), 0.0)  # consumed: y's elements were overwritten
    z = wp.zeros(3, requires_grad=True)
    own = z.grad
    with wp.Tape() as tape:
        wp.launch(square, 3, inputs=[x], outputs=[z])
    seed2 = wp.full(3, 2.0)
    tape.backward(grads={z: seed2})
    assert z.grad is own
    np.testing.assert_array_equal(seed2.numpy(), 2.0)


def test_a_recorded_copy_lists_both_arrays_in_gradients():
    """wp.copy under a tape lists dest and src in `tape.gradients` when it is recorded (Warp
    records it with record_func(arrays=[dest, src])), so code walking the dict sees them."""
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, x)
    assert tape.gradients[x] is x.grad and tape.gradients[y] is y.grad
    y.grad.fill_(1.0)
    tape.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 1.0)
