"""Gradient checks shared by the reverse-mode tests: adjoint launches against central finite
differences of the forward kernel, in float64.

The adjoint of a launch maps seeds on the *final* contents of its arrays to gradients with
respect to their *initial* contents: after `launch(adjoint=True)` with `adj_k` holding seed
`s_k`, `adj_k` holds d L / d a_k(initial) for L = sum_k <s_k, a_k(final)> (on a Tape; a
user's adjoint launch leaves the seeds of arrays the kernel only writes as given). `check_adjoint`
checks exactly that identity for every float array argument, so one helper covers inputs,
outputs, arrays updated in place and atomic accumulators alike.
"""

from __future__ import annotations

import numpy as np

import weft as wp

F64 = wp.float64


def as_weft(arg):
    """numpy float64/int arrays become weft arrays; `(numpy array, weft dtype)` pairs become
    arrays of that dtype (vectors, matrices, quaternions); anything else is passed as is."""
    if isinstance(arg, tuple) and len(arg) == 2 and isinstance(arg[0], np.ndarray):
        return wp.array(arg[0].copy(), dtype=arg[1])
    if isinstance(arg, np.ndarray):
        return wp.array(arg.copy(), dtype=F64 if arg.dtype == np.float64 else wp.int32)
    return arg


def _data(arg):
    """The numpy data of an array argument, or None for non-arrays."""
    if isinstance(arg, tuple) and len(arg) == 2 and isinstance(arg[0], np.ndarray):
        return arg[0]
    return arg if isinstance(arg, np.ndarray) else None


def _with_data(arg, data):
    return (data, arg[1]) if isinstance(arg, tuple) else data


def differentiable(arg) -> bool:
    d = _data(arg)
    return d is not None and d.dtype == np.float64


def numeric_grad(f, xs, eps=1e-6) -> list[np.ndarray]:
    """Central differences of scalar `f(list of float64 arrays)` with respect to each array."""
    xs = [np.array(x, dtype=np.float64) for x in xs]
    grads = []
    for x in xs:
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            saved = x[idx]
            x[idx] = saved + eps
            hi = f(xs)
            x[idx] = saved - eps
            lo = f(xs)
            x[idx] = saved
            g[idx] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def run_forward(kernel, dim, args) -> list:
    """Launch `kernel` on fresh weft copies of `args`; the final contents of every array
    argument (None for non-arrays)."""
    converted = [as_weft(a) for a in args]
    wp.launch(kernel, dim, inputs=converted)
    return [c.numpy().copy() if isinstance(c, wp.array) else None for c in converted]


def run_adjoint(kernel, dim, args, seeds) -> list:
    """The adjoint from the initial `args` with `seeds[k]` on the final contents of float
    array k, run twice: recorded on a Tape (whose adjoints consume what the kernel
    overwrote) and as one `launch(adjoint=True)`, which must agree except that it leaves
    the adjoints of write-only arrays as given. Returns the Tape's adjoints (None where
    there is none)."""
    float_idx = [k for k in range(len(args)) if seeds[k] is not None]
    primal = [as_weft(a) for a in args]
    for k in float_idx:
        primal[k].requires_grad = True
    with wp.Tape() as tape:
        wp.launch(kernel, dim, inputs=primal)
    tape.backward(grads={primal[k]: seeds[k] for k in float_idx})
    consumed = [primal[k].grad.numpy().copy() if k in float_idx else None for k in range(len(args))]

    primal = [as_weft(a) for a in args]
    adj = [as_weft(_with_data(a, np.asarray(seeds[k], dtype=np.float64))) if seeds[k] is not None else None
           for k, a in enumerate(args)]
    wp.launch(kernel, dim, inputs=primal, adj_inputs=adj, adjoint=True)
    for k in float_idx:
        expected = seeds[k] if k in kernel.write_only_params else consumed[k]
        np.testing.assert_allclose(adj[k].numpy(), np.reshape(expected, adj[k].numpy().shape), rtol=1e-12,
                                   atol=0, err_msg=f"launch(adjoint=True): adjoint of '{kernel.arg_names[k]}'")
    return consumed


def check_adjoint(kernel, dim, args, seeds=None, *, eps=1e-6, rtol=1e-6, atol=1e-7, rng_seed=0) -> list:
    """Check the adjoint of `kernel` over `dim` threads against finite differences of its
    forward launch. `seeds` maps argument index -> seed of that array's final contents
    (default: random seeds on every float array). Returns the adjoint (gradient) arrays,
    one per argument (None for non-float arguments), for analytic checks."""
    rng = np.random.default_rng(rng_seed)
    float_idx = [k for k, a in enumerate(args) if differentiable(a)]
    if seeds is None:
        seeds = {k: rng.standard_normal(_data(args[k]).shape) for k in float_idx}
    seeds = [np.asarray(seeds[k], np.float64) if k in seeds else
             (np.zeros(_data(args[k]).shape) if k in float_idx else None) for k in range(len(args))]

    def loss(values):
        trial = list(args)
        for k, v in zip(float_idx, values):
            trial[k] = _with_data(args[k], v)
        finals = run_forward(kernel, dim, trial)
        return sum(float(np.sum(seeds[k] * finals[k])) for k in float_idx)

    expected = numeric_grad(loss, [_data(args[k]) for k in float_idx], eps)
    got = run_adjoint(kernel, dim, args, seeds)
    for k, fd in zip(float_idx, expected):
        name = kernel.arg_names[k]
        np.testing.assert_allclose(got[k], fd, rtol=rtol, atol=atol,
                                   err_msg=f"kernel '{kernel.name}': gradient of argument '{name}'")
    return got


def ones_seed(args, k) -> dict:
    """A seed of ones on argument `k` only (for analytic checks: the result is J^T 1)."""
    return {k: np.ones(_data(args[k]).shape)}


def check_tape(record, values, *, eps=1e-6, rtol=1e-6, atol=1e-7) -> list:
    """Check a recorded program against finite differences. `record(arrays)` launches
    kernels on `arrays` (weft arrays with gradients, made from `values`: float64 numpy
    arrays or `(numpy array, weft dtype)` pairs) and returns a one-element loss array; it
    runs once inside a Tape and many times outside one. After `tape.backward(loss=...)`
    each array's `.grad` must be d loss / d its initial contents. Returns the gradients."""
    def make(vals):
        return [wp.array(np.array(v, np.float64), dtype=_dtype(a), requires_grad=True) for a, v in zip(values, vals)]

    def loss_of(vals):
        return float(record(make(vals)).numpy().reshape(-1)[0])

    data = [_data(a) for a in values]
    expected = numeric_grad(loss_of, data, eps)
    arrays = make(data)
    with wp.Tape() as tape:
        loss = record(arrays)
    tape.backward(loss=loss)
    grads = [a.grad.numpy().copy() for a in arrays]
    for k, (g, fd) in enumerate(zip(grads, expected)):
        np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol, err_msg=f"gradient of input {k}")
    return grads


def _dtype(arg):
    return arg[1] if isinstance(arg, tuple) else F64
