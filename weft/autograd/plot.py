"""`jacobian_plot`: the Jacobians of `jacobian` / `jacobian_fd` (or gradcheck's error
matrices) as a grid of images, one row per output and one column per input."""

from __future__ import annotations

import numpy as np

from ..lang.kernel import Kernel
from ..runtime.array import array
from .problem import Problem, _parameter_names


class FunctionMetadata:
    """What a Jacobian plot names (Warp's `FunctionMetadata`): `key` (the kernel or function,
    None for an anonymous one), `input_labels` / `output_labels` (an entry per input / output
    slot), `input_dtypes` / `output_dtypes` (an array's dtype, None for a non-array slot) and
    the strides (kept for Warp's signature). Pass one to `jacobian_plot` (or `jacobian`'s
    `metadata`) to name the rows and columns yourself."""

    def __init__(self, key=None, input_labels=None, output_labels=None, input_strides=None, output_strides=None,
                 input_dtypes=None, output_dtypes=None):
        self.key = key
        self.input_labels, self.output_labels = input_labels, output_labels
        self.input_strides, self.output_strides = input_strides, output_strides
        self.input_dtypes, self.output_dtypes = input_dtypes, output_dtypes

    @property
    def is_empty(self) -> bool:
        return self.key is None

    def input_is_array(self, i: int) -> bool:
        return self.input_dtypes[i] is not None

    def output_is_array(self, i: int) -> bool:
        return self.output_dtypes[i] is not None


def _slots(values) -> tuple[list, list]:
    """Strides and dtypes of argument values (None for those that are not arrays)."""
    return ([v.strides if isinstance(v, array) else None for v in values],
            [v.dtype if isinstance(v, array) else None for v in values])


def metadata_of(kernel, inputs, outputs, jacobians) -> FunctionMetadata:
    """The plot's metadata for what `jacobian_plot` accepts in its `kernel` argument."""
    if isinstance(kernel, FunctionMetadata):
        return kernel
    if isinstance(kernel, Problem):
        ins, outs = kernel.slot_values()
        (in_strides, in_dtypes), (out_strides, out_dtypes) = _slots(ins), _slots(outs)
        return FunctionMetadata(kernel.key, kernel.in_labels, kernel.out_labels, in_strides, out_strides,
                                in_dtypes, out_dtypes)
    if isinstance(kernel, Kernel):
        if inputs is None:
            raise ValueError(f"jacobian_plot: inputs must be provided when kernel is a kernel ('{kernel.key}'): "
                             "they tell which of its arguments are inputs and which outputs")
        names, n = kernel.arg_names, len(inputs)
        outs = list(outputs) if outputs is not None else [None] * (len(names) - n)
        in_strides, in_dtypes = _slots(inputs)
        out_strides, out_dtypes = _slots(outs)
        # (an output not passed in: the dtype its parameter declares, where it is an array)
        out_dtypes = [d if d is not None else _declared_dtype(kernel, n + j) for j, d in enumerate(out_dtypes)]
        return FunctionMetadata(kernel.key, names[:n], names[n:], in_strides, out_strides, in_dtypes, out_dtypes)
    if callable(kernel):
        n_in = len(inputs) if inputs is not None else 1 + max((i for i, _ in jacobians), default=-1)
        n_out = 1 + max((j for _, j in jacobians), default=-1)
        ins = list(inputs) if inputs is not None else [None] * n_in
        in_strides, in_dtypes = _slots(ins)
        if inputs is None:  # (no values to read the dtypes from: the Jacobians' own)
            in_dtypes = [_jacobian_dtype(jacobians, i) for i in range(n_in)]
        return FunctionMetadata(getattr(kernel, "__name__", type(kernel).__name__), _parameter_names(kernel, n_in),
                                [f"output_{j}" for j in range(n_out)], in_strides, [None] * n_out, in_dtypes,
                                [None] * n_out)
    raise TypeError(f"jacobian_plot: expected the kernel or function the Jacobians are of, or a "
                    f"FunctionMetadata, got {type(kernel).__name__}")


def fill_metadata(metadata: FunctionMetadata, problem: Problem):
    """Fill an empty `metadata` (one given to `jacobian` with nothing set, as Warp fills it)
    with the problem's names, strides and dtypes."""
    vars(metadata).update(vars(metadata_of(problem, None, None, {})))


def _declared_dtype(kernel, position: int):
    try:
        return getattr(kernel.arg_types[position], "dtype", None)
    except (AttributeError, IndexError, TypeError):
        return None


def _jacobian_dtype(jacobians, i: int):
    J = next((J for (k, _), J in jacobians.items() if k == i), None)
    return J.dtype if isinstance(J, array) else (None if J is None else 1)


def _components(dtype) -> int | None:
    """Scalars per element of `dtype` (None where it has no fixed count, e.g. `typing.Any`)."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype
    return getattr(dtype, "_length_", None)


def validate(metadata: FunctionMetadata, jacobians) -> dict:
    """Check that every input and output the Jacobians refer to is named (and each input's
    dtype known); returns {input index: components per element}."""
    labels = metadata.input_labels or []
    dtypes = metadata.input_dtypes or []
    components = {}
    for i in sorted({i for i, _ in jacobians}):
        if not 0 <= i < len(labels):
            raise ValueError(f"Invalid Jacobian input index {i}: plotting metadata defines {len(labels)} inputs")
        if labels[i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {i}: missing label")
        if i >= len(dtypes) or dtypes[i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {i} ('{labels[i]}'): "
                             "missing array dtype")
        components[i] = _components(dtypes[i])
        if components[i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {i} ('{labels[i]}'): array "
                             f"dtype {dtypes[i]!r} has no component count")
    out_labels = metadata.output_labels or []
    for j in sorted({j for _, j in jacobians}):
        if not 0 <= j < len(out_labels):
            raise ValueError(f"Invalid Jacobian output index {j}: plotting metadata defines {len(out_labels)} "
                             "outputs")
        if out_labels[j] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian output index {j}: missing label")
    return components


def jacobian_plot(jacobians: dict, kernel, inputs=None, show_plot=True, show_colorbar=True,
                  scale_colors_per_submatrix=False, title=None, colormap="coolwarm", log_scale=False, *,
                  outputs=None):
    """Draw `jacobians` ({(input index, output index): Jacobian}, as `jacobian` returns them)
    with matplotlib: a grid with a row per output and a column per input, each Jacobian an
    image (NaN entries, those not computed, left blank). `kernel` is the kernel (with its
    `inputs`, which tell inputs from outputs) or Python function they are of, or a
    `FunctionMetadata` naming the inputs and outputs. The title defaults to
    "<name> kernel Jacobian", as Warp's. Colours span all Jacobians together, or each one
    with `scale_colors_per_submatrix`; `log_scale` shows log10 |J|. Shows the figure when
    `show_plot`; returns it (None if there is nothing to draw). Raises ValueError where a
    Jacobian's input or output is not named, or an input's dtype is unknown."""
    metadata = metadata_of(kernel, inputs, outputs, jacobians)
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("weft.autograd.jacobian_plot needs matplotlib (pip install matplotlib)") from None
    cols = sorted({i for i, _ in jacobians})
    rows = sorted({j for _, j in jacobians})
    if not cols or not rows:
        return None
    validate(metadata, jacobians)
    # (Jacobians as `jacobian` returns them, weft arrays in Warp's layout: as matrices)
    jacobians = {p: J.numpy().reshape(J.shape[0], -1) if isinstance(J, array) else np.asarray(J)
                 for p, J in jacobians.items()}
    images = {p: np.log10(np.abs(J) + 1e-12) if log_scale else np.asarray(J, dtype=np.float64)
              for p, J in jacobians.items()}
    finite = [v[np.isfinite(v)] for v in images.values()]
    finite = np.concatenate(finite) if finite else np.zeros(0)
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)

    widths = [max(jacobians[next(p for p in jacobians if p[0] == i)].shape[1], 1) for i in cols]
    heights = [max(jacobians[next(p for p in jacobians if p[1] == j)].shape[0], 1) for j in rows]
    fig, axes = plt.subplots(len(rows), len(cols), squeeze=False, figsize=(7, 7),
                             gridspec_kw={"width_ratios": widths, "height_ratios": heights})
    if title is None:
        title = f"{metadata.key or 'unknown'} kernel Jacobian{' (log10 |J|)' if log_scale else ''}"
    fig.suptitle(title)
    if getattr(fig.canvas, "manager", None) is not None:
        fig.canvas.manager.set_window_title(title)
    drawn = np.array([[(i, j) in images for i in cols] for j in rows])
    image = None
    for r, j in enumerate(rows):
        for c, i in enumerate(cols):
            ax = axes[r, c]
            if not drawn[r, c]:
                ax.axis("off")
                continue
            data = images[i, j]
            lo, hi = vmin, vmax
            if scale_colors_per_submatrix:
                ok = data[np.isfinite(data)]
                lo, hi = (float(ok.min()), float(ok.max())) if ok.size else (0.0, 1.0)
            image = ax.imshow(data, cmap=colormap, vmin=lo, vmax=hi, aspect="auto", interpolation="nearest")
            if not drawn[r + 1:, c].any():  # the lowest image of its column
                ax.set_xlabel(metadata.input_labels[i])
            if not drawn[r, :c].any():  # the leftmost image of its row
                ax.set_ylabel(metadata.output_labels[j])
            if show_colorbar and scale_colors_per_submatrix:
                fig.colorbar(image, ax=ax)
    if show_colorbar and not scale_colors_per_submatrix and image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist())
    if show_plot:
        plt.show()
    return fig
