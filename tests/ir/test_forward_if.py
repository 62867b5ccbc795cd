"""An element an `if` may store, read before and after it, reaches the later reads as the
`if`'s result (weft/ir/forward_if.py)."""

import numpy as np

import weft as wp
from weft.ir.core import walk


@wp.kernel
def read_store_read(mu: wp.array(dtype=float), flag: wp.array(dtype=int), out: wp.array(dtype=float)):
    p = wp.tid()
    a = mu[p]
    if flag[p] == 1:
        mu[p] = a * 10.0
    elif flag[p] == 2:
        mu[p] = -1.0
    out[p] = a + mu[p]


@wp.kernel
def stored_again_after(mu: wp.array(dtype=float), flag: wp.array(dtype=int), out: wp.array(dtype=float)):
    p = wp.tid()
    a = mu[p]
    if flag[p] == 1:
        mu[p] = 5.0
    b = mu[p]
    mu[p] = b + 1.0  # a later store: the read after it stays a read of memory
    out[p] = a + b + mu[p]


@wp.kernel
def other_index_in_branch(mu: wp.array(dtype=float), flag: wp.array(dtype=int), out: wp.array(dtype=float)):
    p = wp.tid()
    a = mu[p]
    if flag[p] == 1:
        mu[(p + 1) % 3] = 7.0  # another element of the array: nothing is forwarded
    out[p] = a + mu[p]


def _loads_of_mu(kernel) -> int:
    return sum(1 for op in walk(kernel.ir().body) if op.name == "load" and op.operands[0].hint == "mu")


def _run(kernel, flags):
    mu = wp.array(np.array([1.0, 2.0, 3.0], np.float32))
    out = wp.zeros(3, dtype=float)
    wp.launch(kernel, 3, [mu, wp.array(np.array(flags, np.int32)), out])
    return mu.numpy(), out.numpy()


def test_the_read_after_the_if_takes_the_branch_value():
    assert _loads_of_mu(read_store_read) == 1
    mu, out = _run(read_store_read, [0, 1, 2])
    np.testing.assert_array_equal(mu, [1.0, 20.0, -1.0])
    np.testing.assert_array_equal(out, [2.0, 22.0, 2.0])


def test_reads_after_a_later_store_stay_reads():
    mu, out = _run(stored_again_after, [1, 0, 1])
    np.testing.assert_array_equal(mu, [6.0, 3.0, 6.0])
    np.testing.assert_array_equal(out, [1.0 + 5.0 + 6.0, 2.0 + 2.0 + 3.0, 3.0 + 5.0 + 6.0])


def test_a_store_elsewhere_in_the_array_is_not_forwarded():
    assert _loads_of_mu(other_index_in_branch) == 2
    mu = wp.array(np.array([1.0, 2.0, 3.0], np.float32))
    out = wp.zeros(3, dtype=float)
    wp.launch(other_index_in_branch, 3, [mu, wp.array(np.array([0, 0, 0], np.int32)), out])
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0, 6.0])


@wp.struct
class _Model:
    mu: wp.array(dtype=float)


@wp.func
def _damage(model: _Model, p: int, limit: float) -> float:
    a = 2.0 * model.mu[p]
    if a > limit:
        model.mu[p] = 0.0
    return a


@wp.kernel
def material_chain(model: _Model, material: int, out: wp.array(dtype=float)):
    p = wp.tid()
    s = 0.0
    if material == 1:
        s = _damage(model, p, 3.0)
    else:  # (leaves mu alone: the value after the chain is read before it)
        s = 1.0
    out[p] = s + model.mu[p]


def test_a_branch_that_leaves_the_array_alone_reads_it_before_the_if():
    # PhysDreamer's compute_stress_from_F_trial: material branches, one of which may zero
    # model.mu[p], then the stress reads model.mu[p] (the struct's field read again)
    ops = [op.name for op in material_chain.ir().body.ops]
    assert "load" not in ops[ops.index("if"):]  # (the read after the chain is the if's result)
    for material, expected in ((1, [2.0 + 1.0, 4.0 + 0.0, 6.0 + 0.0]), (0, [2.0, 3.0, 4.0])):
        model = _Model()
        model.mu = wp.array(np.array([1.0, 2.0, 3.0], np.float32))
        out = wp.zeros(3, dtype=float)
        wp.launch(material_chain, 3, [model, material, out])
        np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def write_then_read(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = c[i] * c[i]
    b[i] = a[i]  # forwarded: no load left, but the kernel still reads a (Warp's Tape checks)


def test_a_forwarded_read_still_counts_as_a_read():
    assert not any(op.name == "load" and op.operands[0].hint == "a" for op in walk(write_then_read.ir().body))
    reads, writes = write_then_read.array_effects()
    assert 0 in reads and 0 in writes and 0 not in write_then_read.write_only_params
