"""Jacobians of a kernel launch (or of a function that launches kernels), by adjoint
launches (`jacobian`) and by central finite differences (`jacobian_fd`).

Both return {(input index, output index): J} in Warp's layout: J is a weft array of the
input's dtype with shape (scalars of the output, elements of the input), so `J.numpy()`
has shape (output scalars, input size, *the input dtype's components); row r holds
d output_r / d input, the output flattened in C order with vector and matrix components
last. Entries not computed (beyond `max_outputs_per_var` rows or `max_inputs_per_var`
input scalars) are NaN. Internally (gradcheck) Jacobians are float64 numpy arrays
(output scalars, input scalars).
"""

from __future__ import annotations

import numpy as np

from ..runtime.array import array, element_numpy
from .problem import Problem, make_problem, nudge, scalar_count


def jacobian(function, dim=None, inputs=None, outputs=None, input_output_mask=None, device=None,
             max_blocks=0, block_dim=None, max_outputs_per_var=-1, plot_jacobians=False, metadata=None,
             restore_inputs=True) -> dict:
    """Jacobians from the adjoint: one adjoint launch per output scalar, seeded with 1 there
    (fresh zero adjoints elsewhere), gives that row for every input at once.

    `function` is a `@weft.kernel` launched as `weft.launch(function, dim, inputs, outputs)`
    (its arguments are `inputs + outputs`), or a Python function called as `function(*inputs)`
    that returns an array or a list of arrays (the outputs; `dim` and `outputs` are unused).
    Only float arrays with `requires_grad=True` take part. `input_output_mask` lists the
    (input, output) pairs wanted, each by index into `inputs` / `outputs` or by argument name.
    The Jacobian is taken at the arrays' current contents, which are left unchanged (a
    function's recorded call runs once). `max_outputs_per_var > 0` computes only that many
    rows per output. `restore_inputs=False` (functions only) leaves the inputs as the
    function's runs change them. `metadata` (a `FunctionMetadata`) names the inputs and
    outputs in the plot (by default, the kernel's or function's own names); an empty one
    is filled with those. Returns
    {(input index, output index): weft array} (see the module docstring).
    """
    with make_problem(function, dim, inputs, outputs, device, max_blocks, block_dim, restore_inputs) as problem:
        jacobians = ad_jacobians(problem, problem.pairs(input_output_mask), max_outputs_per_var)
        if metadata is not None and metadata.is_empty:
            from .plot import fill_metadata
            fill_metadata(metadata, problem)
        out = as_arrays(jacobians, problem)
    if plot_jacobians:
        from .plot import jacobian_plot
        jacobian_plot(jacobians, problem if metadata is None or metadata.is_empty else metadata)
    return out


def jacobian_fd(function, dim=None, inputs=None, outputs=None, input_output_mask=None, device=None,
                max_blocks=0, block_dim=None, max_inputs_per_var=-1, eps=1e-4, plot_jacobians=False,
                metadata=None, restore_inputs=True) -> dict:
    """Jacobians by central differences: each input scalar is moved by -eps and +eps and the
    forward re-run from the saved state of every array (outputs too, so kernels that
    accumulate into their outputs are differenced correctly), giving that column for every
    output at once. The step divided by is the one the input's precision actually stored.

    Arguments as for `jacobian`; `eps` is the step (in the input's units) and
    `max_inputs_per_var > 0` computes only that many columns per input. The arrays are
    left as they were. Returns {(input index, output index): weft array} (see the module
    docstring).
    """
    with make_problem(function, dim, inputs, outputs, device, max_blocks, block_dim, restore_inputs) as problem:
        jacobians = fd_jacobians(problem, problem.pairs(input_output_mask), max_inputs_per_var, eps)
        if metadata is not None and metadata.is_empty:
            from .plot import fill_metadata
            fill_metadata(metadata, problem)
        out = as_arrays(jacobians, problem)
    if plot_jacobians:
        from .plot import jacobian_plot
        jacobian_plot(jacobians, problem if metadata is None or metadata.is_empty else metadata)
    return out


def as_arrays(jacobians: dict, problem: Problem) -> dict:
    """Float64 Jacobians (output scalars, input scalars) in Warp's layout (module docstring)."""
    out = {}
    for (i, j), J in jacobians.items():
        a = problem.inputs[i]
        scalar, components = element_numpy(a.dtype)
        data = J.reshape((J.shape[0], a.size) + tuple(components)).astype(scalar)
        out[i, j] = array(data, dtype=a.dtype, device=a.device)
    return out


def _empty(problem: Problem, pairs) -> dict:
    return {(i, j): np.full((scalar_count(problem.outputs[j]), scalar_count(problem.inputs[i])), np.nan)
            for i, j in pairs}


def _limit(n: int, most: int) -> int:
    return min(n, most) if most > 0 else n


def ad_jacobians(problem: Problem, pairs, max_outputs_per_var=-1) -> dict:
    """The adjoint Jacobians of `pairs` ((input, output) indices) of `problem`."""
    jacobians = _empty(problem, pairs)
    by_output: dict[int, list] = {}
    for i, j in pairs:
        by_output.setdefault(j, []).append(i)
    problem.check_backward()
    problem.restore()
    for j, wanted in by_output.items():
        for r in range(_limit(scalar_count(problem.outputs[j]), max_outputs_per_var)):
            row = problem.backward(j, r, wanted)
            for i in wanted:
                jacobians[i, j][r] = row[i]
    return jacobians


def fd_jacobians(problem: Problem, pairs, max_inputs_per_var=-1, eps=1e-4) -> dict:
    """The central-difference Jacobians of `pairs` of `problem`, with step `eps`."""
    if not eps > 0:
        raise ValueError(f"{problem.name}: the finite-difference step eps must be positive, got {eps!r}")
    jacobians = _empty(problem, pairs)
    by_input: dict[int, list] = {}
    for i, j in pairs:
        by_input.setdefault(i, []).append(j)
    for i, wanted in by_input.items():
        a = problem.inputs[i]
        for c in range(_limit(scalar_count(a), max_inputs_per_var)):
            problem.restore()
            down = nudge(a, c, -eps)
            left = problem.forward(wanted)
            problem.restore()
            up = nudge(a, c, eps)
            right = problem.forward(wanted)
            if up == down:
                raise ValueError(f"{problem.name}: eps={eps!r} is too small to change input "
                                 f"'{problem.in_labels[i]}' at its precision")
            for j in wanted:
                jacobians[i, j][:, c] = (right[j] - left[j]) / (up - down)
    problem.restore()
    return jacobians
