"""Tape bookkeeping: how many launches and gradients a tape holds before and after backward, backward
with a grads dict (seeding an array without a .grad buffer and one with), record_func callbacks
mixed with kernels, scopes (record_scope_begin/end, empty scopes dropped), tape.zero() versus
tape.reset() and re-recording on the same tape, a struct parameter with array fields whose
adjoint struct appears in tape.gradients, and gradients of a copy recorded on the tape."""

import numpy as np
import warp as wp


@wp.struct
class Pair:
    a: wp.array(dtype=float)
    b: wp.array(dtype=float)
    w: float


@wp.kernel
def mul(x: wp.array(dtype=float), k: float, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = k * x[i] * x[i]


@wp.kernel
def combine(p: Pair, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = p.w * p.a[i] * p.b[i]


@wp.kernel
def reduce(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i])


def run():
    r = {}
    x = wp.array(np.array([1.0, -2.0, 0.5], dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    z = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(mul, dim=3, inputs=[x, 3.0], outputs=[y])
        wp.launch(mul, dim=3, inputs=[y, 0.5], outputs=[z])
    r["launches_recorded"] = len(tape.launches)
    r["gradients_before_backward"] = len(tape.gradients)
    tape.backward(grads={z: wp.array(np.array([1.0, 0.0, 2.0], dtype=np.float32))})
    r["gradients_after_backward"] = len(tape.gradients)
    r["x_grad"] = x.grad.numpy().copy()
    r["y_grad"] = y.grad.numpy().copy()
    r["gradients_x_is_grad"] = tape.gradients[x] is x.grad
    tape.zero()
    r["x_grad_zeroed"] = x.grad.numpy().copy()
    r["z_grad_zeroed"] = z.grad.numpy().copy()
    tape.backward(grads={z: wp.array(np.array([1.0, 1.0, 1.0], dtype=np.float32))})
    tape.backward(grads={z: wp.array(np.array([1.0, 1.0, 1.0], dtype=np.float32))})
    r["x_grad_twice"] = x.grad.numpy().copy()
    tape.reset()
    r["after_reset_launches"] = len(tape.launches)
    r["after_reset_x_grad"] = x.grad.numpy().copy()
    u = wp.zeros(3, dtype=float)
    seed = wp.array(np.array([2.0, 2.0, 2.0], dtype=np.float32))
    with tape:
        wp.launch(mul, dim=3, inputs=[x, 1.0], outputs=[u])
    tape.backward(grads={u: seed})
    r["seed_became_grad"] = u.grad is seed
    r["x_grad_rerecorded"] = x.grad.numpy().copy()
    tape.reset()
    calls = []
    v = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    w = wp.zeros(3, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)

    def scale_back():
        calls.append("scale")
        g = w.grad.numpy()
        v.grad.assign(v.grad.numpy() + 4.0 * g)

    with tape:
        tape.record_scope_begin("empty")
        tape.record_scope_end()
        tape.record_scope_begin("custom")
        w.assign(v.numpy() * 4.0)
        tape.record_func(scale_back, [v, w])
        tape.record_scope_end()
        wp.launch(reduce, dim=3, inputs=[w], outputs=[loss])
    r["scopes"] = len(tape.scopes)
    r["scope_names"] = ",".join(str(s[1]) for s in tape.scopes)
    r["entries"] = len(tape.launches)
    tape.backward(loss)
    r["calls"] = ",".join(calls)
    r["v_grad"] = v.grad.numpy().copy()
    r["w_grad"] = w.grad.numpy().copy()
    tape.zero()
    r["v_grad_zeroed_by_record_func"] = v.grad.numpy().copy()
    r["loss_grad_kept"] = loss.grad.numpy().copy()
    tape.reset()
    p = Pair()
    p.a = wp.array(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    p.b = wp.array(np.array([3.0, -1.0], dtype=np.float32), requires_grad=True)
    p.w = 2.0
    out = wp.zeros(2, dtype=float, requires_grad=True)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    with tape:
        wp.launch(combine, dim=2, inputs=[p], outputs=[out])
        wp.launch(reduce, dim=2, inputs=[out], outputs=[total])
    tape.backward(total)
    r["pair_a_grad"] = p.a.grad.numpy().copy()
    r["pair_b_grad"] = p.b.grad.numpy().copy()
    r["struct_in_gradients"] = p in tape.gradients
    tape.zero()
    r["pair_a_grad_zeroed"] = p.a.grad.numpy().copy()
    tape.reset()
    src = wp.array(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), requires_grad=True)
    dst = wp.zeros(4, dtype=float, requires_grad=True)
    sq = wp.zeros(4, dtype=float, requires_grad=True)
    s = wp.zeros(1, dtype=float, requires_grad=True)
    with tape:
        wp.copy(dst, src)
        wp.launch(mul, dim=4, inputs=[dst, 1.0], outputs=[sq])
        wp.launch(reduce, dim=4, inputs=[sq], outputs=[s])
    tape.backward(s)
    r["copy_src_grad"] = src.grad.numpy().copy()
    r["copy_entries"] = len(tape.launches)
    return r
