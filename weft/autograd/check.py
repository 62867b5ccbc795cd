"""Gradient checks: adjoint Jacobians against finite differences, for one kernel launch or
function (`gradcheck`) or for every launch recorded on a Tape (`gradcheck_tape`).

An entry passes when |AD - FD| <= atol + rtol * |FD| and AD is not NaN. Reports use the
absolute error |AD - FD| and the relative error |AD - FD| / max(|FD|, atol) (relative to
atol where FD is smaller, so that entries near zero do not dominate it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..lang.kernel import Kernel
from .jacobian import ad_jacobians, fd_jacobians
from .problem import FunctionProblem, Problem, element_name, make_problem, recorded_problem


@dataclass(eq=False)
class PairCheck:
    """The comparison of one (input i, output j) Jacobian: `ad` and `fd` (the checked
    rows and columns), the worst entry (the one furthest past its tolerance, or closest to
    it) and the largest absolute and relative errors with where they are."""

    i: int
    j: int
    ad: np.ndarray
    fd: np.ndarray
    passed: bool
    failures: int
    worst: tuple
    max_abs: tuple   # (error, (row, column))
    max_rel: tuple


def compare(ad: np.ndarray, fd: np.ndarray, atol: float, rtol: float, i=0, j=0) -> PairCheck:
    """Compare Jacobians `ad` and `fd` (same shape) entry by entry."""
    with np.errstate(invalid="ignore", divide="ignore"):
        error = np.abs(ad - fd)
        allowed = atol + rtol * np.abs(fd)
        bad = np.isnan(ad) | ~(error <= allowed)
        excess = np.where(np.isnan(error), np.inf, error / np.maximum(allowed, 1e-300))
        relative = error / np.maximum(np.abs(fd), atol) if atol > 0 else error / np.abs(fd)

    def worst_of(values) -> tuple:
        if values.size == 0:
            return 0.0, (0, 0)
        at = np.unravel_index(np.argmax(np.where(np.isnan(values), np.inf, values)), values.shape)
        return float(values[at]), tuple(int(k) for k in at)

    return PairCheck(i, j, ad, fd, not bad.any(), int(bad.sum()), worst_of(excess)[1], worst_of(error),
                     worst_of(relative))


def gradcheck(function, dim=None, inputs=None, outputs=None, *, eps=1e-4, atol=1e-3, rtol=1e-2,
              raise_exception=True, input_output_mask=None, device=None, max_blocks=0, block_dim=None,
              max_inputs_per_var=-1, max_outputs_per_var=-1, plot_relative_error=False,
              plot_absolute_error=False, show_summary=True, restore_inputs=True) -> bool:
    """Check the adjoint of a kernel (or of a function that launches kernels) against
    central finite differences with step `eps`, for every differentiable (input, output)
    pair (float arrays with `requires_grad=True`) or those `input_output_mask` names.

    Arguments as for `jacobian` / `jacobian_fd`. Passes when every checked entry has
    |AD - FD| <= atol + rtol * |FD| and no AD entry is NaN; `max_inputs_per_var` /
    `max_outputs_per_var` (> 0) check only the first columns / rows per array;
    `restore_inputs` as for `jacobian`. Prints a
    summary (worst absolute and relative errors, and where) when `show_summary`. Returns
    True or False; with `raise_exception`, a failure raises ValueError naming the kernel,
    the pair, the worst entry with its AD and FD values, and the worst relative error.
    """
    with make_problem(function, dim, inputs, outputs, device, max_blocks, block_dim, restore_inputs) as problem:
        pairs = problem.pairs(input_output_mask)
        if not pairs:
            raise ValueError(f"gradcheck: {problem.name} has nothing to check: no input/output pair of "
                             "float arrays with requires_grad=True")
        return _check(problem, pairs, eps, atol, rtol, raise_exception, max_inputs_per_var, max_outputs_per_var,
                      plot_relative_error, plot_absolute_error, show_summary)


def gradcheck_tape(tape, *, eps=1e-4, atol=1e-3, rtol=1e-2, raise_exception=True, input_output_masks=None,
                   blacklist_kernels=None, whitelist_kernels=None, max_inputs_per_var=-1, max_outputs_per_var=-1,
                   plot_relative_error=False, plot_absolute_error=False, show_summary=True,
                   reverse_launches=False, skip_to_launch_index=0) -> bool:
    """`gradcheck` every kernel launch recorded on `tape`, each at the arguments it was
    recorded with (functions recorded with `record_func`, kernels without a backward and
    launches with no differentiable pair are skipped).

    Weft records a launch's inputs and outputs as one argument list, so for a recorded
    launch the inputs are the float arrays with requires_grad=True that the kernel reads,
    the outputs those it writes, both indexed by argument position.
    `input_output_masks` maps a kernel's key or name to its mask (pairs of argument names
    or positions); `blacklist_kernels` / `whitelist_kernels` hold keys or names to skip /
    to check only. `skip_to_launch_index` skips that many launches (counted in the order
    checked; `reverse_launches` checks the last first). Returns True if every check passed.
    """
    masks = input_output_masks or {}
    blacklist, whitelist = set(blacklist_kernels or ()), set(whitelist_kernels or ())
    launches = list(enumerate(tape.launches))
    if reverse_launches:
        launches.reverse()
    passed = True
    for order, (index, entry) in enumerate(launches):
        kernel = getattr(entry, "kernel", None)
        if order < skip_to_launch_index:
            continue
        if hasattr(entry, "function"):  # a weft.autograd.Function: its backward against FD
            passed &= _check_function_step(entry, index, eps, atol, rtol, raise_exception, max_inputs_per_var,
                                           max_outputs_per_var, plot_relative_error, plot_absolute_error,
                                           show_summary, blacklist, whitelist)
            continue
        if not isinstance(kernel, Kernel):
            continue
        names = {kernel.key, kernel.name}
        if names & blacklist or (whitelist and not names & whitelist):
            continue
        if not kernel.enable_backward:
            if show_summary:
                print(f"gradcheck: kernel '{kernel.name}' (tape launch {index}) skipped: enable_backward=False")
            continue
        mask = masks.get(kernel.key, masks.get(kernel.name))
        with recorded_problem(entry, index) as problem:
            pairs = problem.pairs(mask)
            if not pairs:
                if show_summary:
                    print(f"gradcheck: {problem.name} skipped: no differentiable input/output pair")
                continue
            passed &= _check(problem, pairs, eps, atol, rtol, raise_exception, max_inputs_per_var,
                             max_outputs_per_var, plot_relative_error, plot_absolute_error, show_summary)
    return passed


def _check_function_step(step, index, eps, atol, rtol, raise_exception, max_inputs_per_var, max_outputs_per_var,
                         plot_relative_error, plot_absolute_error, show_summary, blacklist, whitelist) -> bool:
    """Check a recorded Function's backward at its arguments' current contents."""
    if step.name in blacklist or (whitelist and step.name not in whitelist):
        return True

    with FunctionProblem(step.function.apply, step.args) as problem:
        problem.name = f"Function '{step.name}' (tape launch {index})"
        problem.key = step.name
        pairs = problem.pairs()
        if not pairs:
            return True
        return _check(problem, pairs, eps, atol, rtol, raise_exception, max_inputs_per_var, max_outputs_per_var,
                      plot_relative_error, plot_absolute_error, show_summary)


def _check(problem: Problem, pairs, eps, atol, rtol, raise_exception, max_inputs_per_var, max_outputs_per_var,
           plot_relative_error, plot_absolute_error, show_summary) -> bool:
    ad = ad_jacobians(problem, pairs, max_outputs_per_var)
    fd = fd_jacobians(problem, pairs, max_inputs_per_var, eps)
    rows = slice(None) if max_outputs_per_var <= 0 else slice(0, max_outputs_per_var)
    cols = slice(None) if max_inputs_per_var <= 0 else slice(0, max_inputs_per_var)
    checks = [compare(ad[p][rows, cols], fd[p][rows, cols], atol, rtol, *p) for p in pairs]
    if show_summary:
        print(summary(problem, checks, eps, atol, rtol))
    if plot_relative_error or plot_absolute_error:
        from .plot import jacobian_plot
        with np.errstate(invalid="ignore", divide="ignore"):
            for what, errors in (("relative", {p: np.abs(ad[p] - fd[p]) / np.maximum(np.abs(fd[p]), atol)
                                               for p in pairs}),
                                 ("absolute", {p: np.abs(ad[p] - fd[p]) for p in pairs})):
                if plot_relative_error if what == "relative" else plot_absolute_error:
                    jacobian_plot(errors, problem, title=f"{problem.key} kernel Jacobian {what} error")
    failed = [c for c in checks if not c.passed]
    if failed and raise_exception:
        raise ValueError(failure_message(problem, failed, len(checks), atol, rtol))
    return not failed


# Reports ---------------------------------------------------------------------------------------
def entry_name(problem: Problem, check: PairCheck, at: tuple) -> str:
    """Entry `at` = (row, column) of a pair's Jacobian as `d y[2] / d x[1]`."""
    out = element_name(problem.out_labels[check.j], problem.outputs[check.j], at[0])
    inp = element_name(problem.in_labels[check.i], problem.inputs[check.i], at[1])
    return f"d {out} / d {inp}"


def summary(problem: Problem, checks, eps, atol, rtol) -> str:
    """A table: per pair the largest absolute and relative errors and where, the AD and FD
    values of the worst entry, and the result; then a verdict line."""
    header = ["input", "output", "max abs error", "max rel error", "worst entry", "AD", "FD", "result"]
    rows = []
    for c in checks:
        if c.ad.size == 0:
            rows.append([problem.in_labels[c.i], problem.out_labels[c.j], "-", "-", "(empty)", "-", "-", "PASS"])
            continue
        rows.append([problem.in_labels[c.i], problem.out_labels[c.j],
                     f"{c.max_abs[0]:.3e} at {entry_name(problem, c, c.max_abs[1])}",
                     f"{c.max_rel[0]:.3e} at {entry_name(problem, c, c.max_rel[1])}",
                     entry_name(problem, c, c.worst), f"{c.ad[c.worst]:.6e}", f"{c.fd[c.worst]:.6e}",
                     "PASS" if c.passed else ("NaN" if np.isnan(c.ad).any() else "FAIL")])
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    lines = [f"Gradient check of {problem.name} (eps={eps:g}, atol={atol:g}, rtol={rtol:g})"]
    lines += ["  " + "  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in [header, *rows]]
    failed = sum(not c.passed for c in checks)
    lines.append(f"Gradient check of {problem.name} " +
                 (f"FAILED for {failed} of {len(checks)} input/output pairs" if failed else "passed"))
    return "\n".join(lines)


def failure_message(problem: Problem, failed, total: int, atol, rtol) -> str:
    """Names the worst failing pair and entry, its AD and FD values and the errors."""
    def badness(c):
        ad, fd = c.ad[c.worst], c.fd[c.worst]
        return np.inf if np.isnan(ad - fd) else abs(ad - fd) / max(atol + rtol * abs(fd), 1e-300)

    c = max(failed, key=badness)
    ad, fd = c.ad[c.worst], c.fd[c.worst]
    where = entry_name(problem, c, c.worst)
    text = (f"gradient check failed for {problem.name}, input '{problem.in_labels[c.i]}' -> output "
            f"'{problem.out_labels[c.j]}': at {where} (Jacobian row {c.worst[0]}, column {c.worst[1]}) "
            f"autodiff gives {ad:.9g} but finite differences give {fd:.9g} "
            f"(absolute error {abs(ad - fd):.3e}, allowed {atol:g} + {rtol:g} * |FD| = {atol + rtol * abs(fd):.3e}); "
            f"{c.failures} of {c.ad.size} entries of this Jacobian fail, worst relative error "
            f"{c.max_rel[0]:.3e} at {entry_name(problem, c, c.max_rel[1])}")
    if np.isnan(c.ad).any():
        text += "; the autodiff Jacobian contains NaN"
    others = [f"'{problem.in_labels[o.i]}' -> '{problem.out_labels[o.j]}'" for o in failed if o is not c]
    if others:
        text += f"; also failing: {', '.join(others)} ({len(failed)} of {total} pairs)"
    return text
