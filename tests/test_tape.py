"""`weft.Tape`: several gradients from one recording (behaviour 1 of the mission), loss and
grads seeds, zero/reset, opting out of recording, user steps with their own backward,
GraphViz output, a multi-step simulation against finite differences, and clear errors."""

import numpy as np
import pytest
from autodiff.helpers import F64, check_tape

import weft as wp


@wp.kernel
def copy_chain(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float),
               s: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i]
    z[i] = y[i]
    s[i] = z[i]


def _chain():
    x = wp.array(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    y, z, s = (wp.zeros(3, requires_grad=True) for _ in range(3))
    tape = wp.Tape()
    with tape:
        wp.launch(copy_chain, 3, inputs=[x], outputs=[y, z, s])
    return tape, x, y, z, s


# Behaviour 1: several gradients from one kernel ------------------------------------------------
def test_several_gradients_from_one_recording_through_grads():
    tape, x, y, z, s = _chain()
    ones = np.ones(3, np.float32)
    tape.backward(grads={y: ones})
    assert x.grad.numpy().tolist() == [1, 1, 1]
    tape.zero()
    tape.backward(grads={z: ones})
    assert x.grad.numpy().tolist() == [1, 1, 1]
    tape.zero()
    tape.backward(grads={s: ones})
    assert x.grad.numpy().tolist() == [1, 1, 1]


def test_several_gradients_from_one_recording_through_fill():
    tape, x, y, z, s = _chain()
    for out in (y, z, s):
        out.grad.fill_(1.0)
        tape.backward()
        assert x.grad.numpy().tolist() == [1, 1, 1]
        tape.zero()
    assert not any(a.grad.numpy().any() for a in (x, y, z, s))


def test_zero_clears_seeds_given_through_grads():
    tape, x, y, z, s = _chain()
    tape.backward(grads={y: np.ones(3, np.float32)})
    tape.zero()
    assert not y.grad.numpy().any()  # the seed itself is gone, not only x.grad
    tape.backward(grads={s: np.ones(3, np.float32)})
    assert x.grad.numpy().tolist() == [1, 1, 1]


def test_grads_creates_a_missing_gradient():
    x = wp.array(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    y, z, s = wp.zeros(3), wp.zeros(3), wp.zeros(3)  # no gradients of their own
    with wp.Tape() as tape:
        wp.launch(copy_chain, 3, inputs=[x], outputs=[y, z, s])
    tape.backward(grads={s: np.full(3, 2.0, np.float32)})
    assert x.grad.numpy().tolist() == [2, 2, 2]


# loss=, zero, reset, record_tape=False ------------------------------------------------------
@wp.kernel
def square_sum(x: wp.array(dtype=F64), loss: wp.array(dtype=F64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


@wp.kernel
def scale(x: wp.array(dtype=F64), y: wp.array(dtype=F64), k: F64):
    i = wp.tid()
    y[i] = x[i] * k


def _scaled_loss(values):
    x = wp.array(values, dtype=F64, requires_grad=True)
    y = wp.zeros(len(values), dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale, len(values), inputs=[x, y, 3.0])
        wp.launch(square_sum, len(values), inputs=[y, loss])
    return tape, x, y, loss


def test_backward_from_loss():
    values = np.array([0.5, -1.0, 2.0])
    tape, x, y, loss = _scaled_loss(values)
    assert loss.numpy()[0] == pytest.approx(9 * np.sum(values**2))
    tape.backward(loss=loss)
    np.testing.assert_allclose(x.grad.numpy(), 18 * values)
    np.testing.assert_allclose(y.grad.numpy(), 0.0)  # consumed by scale's adjoint (y is overwritten)
    assert tape.loss is loss


def test_zero_clears_every_touched_gradient():
    tape, x, y, loss = _scaled_loss(np.array([0.5, -1.0, 2.0]))
    tape.backward(loss=loss)
    tape.zero()
    assert not x.grad.numpy().any() and not y.grad.numpy().any() and not loss.grad.numpy().any()
    tape.backward(loss=loss)  # the recording is still there
    np.testing.assert_allclose(x.grad.numpy(), [9.0, -18.0, 36.0])


def test_gradients_accumulate_across_backward_passes():
    values = np.array([0.5, -1.0, 2.0])
    tape, x, y, loss = _scaled_loss(values)
    tape.backward(loss=loss)
    tape.backward(loss=loss)  # no zero() in between: x.grad adds up, as in Warp
    np.testing.assert_allclose(x.grad.numpy(), 2 * 18 * values)


def test_reset_forgets_the_recording():
    tape, x, y, loss = _scaled_loss(np.array([0.5, -1.0, 2.0]))
    tape.backward(loss=loss)
    tape.reset()
    assert tape.launches == [] and not x.grad.numpy().any() and not loss.grad.numpy().any()
    tape.backward()  # nothing recorded: nothing runs
    assert not x.grad.numpy().any()
    loss.zero_()
    with tape:  # and it records afresh
        wp.launch(square_sum, 3, inputs=[x, loss])
    tape.backward(loss=loss)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -2.0, 4.0])


def test_record_tape_false_is_not_recorded():
    x = wp.array(np.array([1.0, 2.0]), dtype=F64, requires_grad=True)
    y = wp.zeros(2, dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scale, 2, inputs=[x, y, 2.0], record_tape=False)
        wp.launch(square_sum, 2, inputs=[y, loss])
    assert [e.name for e in tape.launches] == ["square_sum"]
    tape.backward(loss=loss)
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 8.0])
    assert not x.grad.numpy().any()  # scale's adjoint did not run


def test_nested_tapes_are_refused_as_in_warp():
    x = wp.array(np.array([1.0, 2.0]), dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    with wp.Tape() as outer:
        with pytest.raises(RuntimeError, match="already recording"):
            with wp.Tape():
                pass
        wp.launch(square_sum, 2, inputs=[x, loss])  # the outer tape still records
    assert len(outer.launches) == 1
    with wp.Tape() as again:  # and a tape can record once the first one is closed
        wp.launch(square_sum, 2, inputs=[x, loss])
    assert len(again.launches) == 1


# record_func ----------------------------------------------------------------------------------
def test_record_func_runs_the_user_backward():
    x = wp.array(np.array([0.5, 1.5, -2.0]), dtype=F64, requires_grad=True)
    y = wp.zeros(3, dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    calls = []
    with wp.Tape() as tape:
        y.assign(np.exp(x.numpy()))  # a step weft cannot see: y = exp(x), done in numpy

        def backward():
            calls.append(1)
            x.grad.assign(x.grad.numpy() + np.exp(x.numpy()) * y.grad.numpy())

        tape.record_func(backward, [x, y])
        wp.launch(square_sum, 3, inputs=[y, loss])
    tape.backward(loss=loss)
    assert calls == [1]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.numpy()), rtol=1e-12)
    tape.zero()
    assert not x.grad.numpy().any() and not y.grad.numpy().any()


def test_copy_on_a_tape_carries_the_gradient():
    x = wp.array(np.array([0.5, -1.0, 2.0]), dtype=F64, requires_grad=True)
    y = wp.zeros(3, dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, x)
        wp.launch(square_sum, 3, inputs=[y, loss])
    tape.backward(loss=loss)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -2.0, 4.0])


# visualize ------------------------------------------------------------------------------------
def test_visualize_writes_a_graphviz_file(tmp_path):
    tape, x, y, loss = _scaled_loss(np.array([0.5, -1.0, 2.0]))
    path = tmp_path / "tape.dot"
    text = tape.visualize(str(path))
    assert path.read_text() == text
    assert text.startswith("digraph")
    assert "scale" in text and "square_sum" in text
    assert text.count("->") >= 4  # scale reads x, writes y; square_sum reads y, writes loss
    with tape:
        tape.record_func(lambda: None, [x])
    text = tape.visualize(str(path))
    assert "<lambda>" in text and "style=dashed" in text


# A simulation over many recorded steps --------------------------------------------------------
@wp.kernel
def spring_forces(x: wp.array(dtype=wp.vec3d), f: wp.array(dtype=wp.vec3d), k: F64):
    i = wp.tid()
    j = (i + 1) % x.shape[0]
    d = x[j] - x[i]
    length = wp.length(d)
    fs = d * (k * (length - 1.0) / length)
    wp.atomic_add(f, i, fs)
    wp.atomic_sub(f, j, fs)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), f: wp.array(dtype=wp.vec3d),
              gravity: wp.vec3d, dt: F64, drag: F64):
    i = wp.tid()
    a = f[i] + gravity - v[i] * (drag * wp.length(v[i]))
    v[i] = v[i] + a * dt  # x, v and f are all updated in place, step after step
    x[i] = x[i] + v[i] * dt
    f[i] = wp.vec3d(0.0, 0.0, 0.0)


@wp.kernel
def distance_loss(x: wp.array(dtype=wp.vec3d), target: wp.vec3d, loss: wp.array(dtype=F64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.length_sq(x[i] - target))


def test_multi_step_simulation_against_finite_differences():
    # Warp: the in-place updates of x, v and f between recorded launches make its backward
    # read later states; the weft tape snapshots them, so the gradient matches FD.
    n, steps = 4, 8
    gravity, target = wp.vec3d(0.0, -9.8, 0.0), wp.vec3d(1.0, 0.5, -0.5)
    rng = np.random.default_rng(7)
    x0 = np.stack([np.cos(np.arange(n) * 1.6), np.sin(np.arange(n) * 1.6), np.zeros(n)], 1) * 0.8
    x0 += rng.standard_normal((n, 3)) * 0.1
    v0 = rng.standard_normal((n, 3)) * 0.5

    def record(arrays):
        x, v = arrays
        f = wp.zeros(n, dtype=wp.vec3d, requires_grad=True)
        loss = wp.zeros(1, dtype=F64, requires_grad=True)
        for _ in range(steps):
            wp.launch(spring_forces, n, inputs=[x, f, 40.0])
            wp.launch(integrate, n, inputs=[x, v, f, gravity, 0.01, 0.3])
        wp.launch(distance_loss, n, inputs=[x, target, loss])
        return loss

    gx, gv = check_tape(record, [(x0, wp.vec3d), (v0, wp.vec3d)], rtol=1e-5)
    assert np.abs(gx).max() > 0.1 and np.abs(gv).max() > 0.01


# Errors ---------------------------------------------------------------------------------------
def test_backward_loss_must_be_one_element_with_a_gradient():
    tape, x, y, loss = _scaled_loss(np.array([0.5, -1.0, 2.0]))
    with pytest.raises(ValueError, match="one scalar"):
        tape.backward(loss=y)
    with pytest.raises(ValueError, match="one scalar"):
        tape.backward(loss=np.zeros(1))
    no_grad = wp.zeros(1, dtype=F64)
    with pytest.raises(ValueError, match="requires_grad=True"):
        tape.backward(loss=no_grad)
    with pytest.raises(TypeError, match="keys must be weft arrays"):
        tape.backward(grads={"y": np.ones(3)})


@wp.kernel(enable_backward=False)
def forward_only(x: wp.array(dtype=F64), loss: wp.array(dtype=F64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i])


def test_backward_through_a_kernel_without_adjoint_warns_and_skips_it(capsys):
    # Warp's behaviour: the kernel contributes nothing, and a warning names it every time
    x = wp.array(np.array([1.0, 2.0]), dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(forward_only, 2, inputs=[x, loss])
    assert loss.numpy()[0] == 3.0
    for _ in range(2):
        tape.backward(loss=loss)
        err = capsys.readouterr().err
        assert ("Warp UserWarning: Running the tape backwards may produce incorrect gradients because recorded "
                "kernel forward_only is configured with the option 'enable_backward=False'.") in err
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


@wp.kernel(enable_backward=False)
def forward_only_copy(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * 2.0


def test_a_kernel_without_adjoint_that_no_gradient_reaches_is_skipped(capsys):
    # (Warp warns about such a kernel whether or not a gradient reaches it; weft warns only
    # where a gradient is lost)
    x = wp.array(np.array([1.0, 2.0]), dtype=F64, requires_grad=True)
    unused = wp.zeros(2, dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(forward_only_copy, 2, inputs=[x, unused])  # its output does not reach the loss
        wp.launch(square_sum, 2, inputs=[x, loss])
    tape.backward(loss=loss)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert "enable_backward" not in capsys.readouterr().err


@wp.kernel
def _square_into(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_assign_of_plain_values_inside_a_tape_keeps_the_gradient():
    """Warp's rule: a copy from values without a gradient is not part of the backward pass, so
    the gradient of an array assigned inside the Tape is with respect to the values assigned."""
    x = wp.zeros(3, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        x.assign(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        wp.launch(_square_into, 3, inputs=[x, y])
    tape.backward(grads={y: wp.ones(3)})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


@wp.kernel
def _store_through_row_view(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    row = y[0:1, :]
    row[0, i] = 2.0 * x[i]


@wp.kernel
def _row_plus_one(y: wp.array2d(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = y[0, i] + 1.0


@pytest.mark.parametrize("retain", [False, True])
def test_retain_grad_holds_for_stores_through_an_in_kernel_view(retain):
    """A store's adjoint consumes the stored array's gradient (zeroes it) unless the array was
    made with retain_grad=True; then y.grad keeps dL/dy = 1, whether the kernel stores into y
    or into a view of y taken in the kernel. (Warp 1.19 drops the flag on views taken in a
    kernel and zeroes y.grad there: its test_array.test_retain_grad_slice_view_store.)"""
    x = wp.ones(4, dtype=float, requires_grad=True)
    y = wp.zeros((1, 4), dtype=float, requires_grad=True, retain_grad=retain)
    z = wp.zeros(4, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_store_through_row_view, 4, inputs=[x, y])
        wp.launch(_row_plus_one, 4, inputs=[y, z])
    tape.backward(grads={z: wp.ones_like(z)})
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 2.0))
    np.testing.assert_array_equal(y.grad.numpy(), np.full((1, 4), 1.0 if retain else 0.0))


# What the Tape keeps of overwritten arrays: only what an adjoint reads -----------------------
@wp.kernel
def integrate_in_place(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.float64), dt: wp.float64):
    i = wp.tid()
    v[i] = v[i] - wp.float64(9.8) * dt
    x[i] = x[i] + v[i] * dt


@wp.kernel
def sine_in_place(x: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x[i] = wp.sin(x[i])


@wp.kernel
def fold_negatives(x: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if x[i] < wp.float64(0.0):  # (the branch taken depends on x: its adjoint reads x)
        x[i] = x[i] * k[0]


@wp.kernel
def sum_of_squares(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


def _loss_and_gradient(steps, x0, *extra):
    """Run `steps(x, *extra)` on a Tape from x0, then sum_of_squares: (loss, d loss / d x0)."""
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        steps(x, *extra)
        wp.launch(sum_of_squares, len(x0), inputs=[x, loss])
    tape.backward(loss=loss)
    return loss.numpy()[0], x.grad.numpy().copy(), tape


def _finite_difference(steps, x0, *extra, h=1e-6):
    out = np.zeros_like(x0)
    for j in range(len(x0)):
        plus, minus = x0.copy(), x0.copy()
        plus[j] += h
        minus[j] -= h
        out[j] = (_loss_and_gradient(steps, plus, *extra)[0] - _loss_and_gradient(steps, minus, *extra)[0]) / (2 * h)
    return out


def test_a_linear_in_place_update_keeps_no_copies_and_its_gradient_is_right():
    # x, v updated in place 10 times: the adjoint of the update never reads their old values
    def steps(x, v0):
        v = wp.array(v0, dtype=wp.float64, requires_grad=True)
        for _ in range(10):
            wp.launch(integrate_in_place, len(v0), inputs=[x, v, 0.01])

    x0, v0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.0, -3.0])
    _, grad, tape = _loss_and_gradient(steps, x0, v0)
    assert "snapshot" not in tape.summary().splitlines()[0]
    # x_final = x0 + sum_k v_k dt, independent of x0's value: d/dx0 of sum x_final^2 is 2 x_final
    x_final = x0 + sum((v0 - 9.8 * 0.01 * (k + 1)) * 0.01 for k in range(10))
    np.testing.assert_allclose(grad, 2 * x_final, rtol=1e-12)
    np.testing.assert_allclose(grad, _finite_difference(steps, x0, v0), rtol=1e-7)


@pytest.mark.parametrize("kernel", ["sine", "branch"])
def test_an_update_whose_adjoint_reads_the_old_value_keeps_a_copy(kernel):
    def steps(x):
        for _ in range(3):
            if kernel == "sine":
                wp.launch(sine_in_place, len(x), inputs=[x])
            else:
                wp.launch(fold_negatives, len(x), inputs=[x, wp.array([-0.5], dtype=wp.float64)])

    x0 = np.array([0.7, -1.3, 2.1, -0.2])
    _, grad, tape = _loss_and_gradient(steps, x0)
    assert "3 snapshots" in tape.summary().splitlines()[0]  # x before each of the three launches
    np.testing.assert_allclose(grad, _finite_difference(steps, x0), rtol=1e-6)


@wp.kernel
def _cube_sum(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i] * x[i] * x[i])


def test_descriptors_from_torch_carry_their_gradient_through_a_tape():
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, 2.0, -1.0], requires_grad=True)
    descriptor = wp.from_torch(x, return_ctype=True)  # (gives x a zero .grad, as Warp's)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_cube_sum, dim=3, inputs=[descriptor], outputs=[total])
    tape.backward(total)
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
