"""`jacobian_plot`: the Jacobians of `jacobian` / `jacobian_fd` (or gradcheck's error
matrices) as a grid of images, one row per output and one column per input."""

from __future__ import annotations

import numpy as np

from ..lang.kernel import Kernel
from ..runtime.array import array
from .problem import Problem, _parameter_names


def _labels(kernel, inputs, jacobians) -> tuple[str, list, list]:
    if isinstance(kernel, Problem):
        return kernel.name, kernel.in_labels, kernel.out_labels
    n_out = 1 + max((j for _, j in jacobians), default=-1)
    if isinstance(kernel, Kernel):
        names = kernel.arg_names
        if inputs is None:  # positions in the argument list, as for recorded launches
            return f"kernel '{kernel.name}'", names, names
        return f"kernel '{kernel.name}'", names[:len(inputs)], names[len(inputs):]
    if callable(kernel):
        n_in = len(inputs) if inputs is not None else 1 + max((i for i, _ in jacobians), default=-1)
        return (f"function '{getattr(kernel, '__name__', '?')}'", _parameter_names(kernel, n_in),
                [f"output_{j}" for j in range(n_out)])
    raise TypeError(f"jacobian_plot: expected the kernel or function the Jacobians are of, got "
                    f"{type(kernel).__name__}")


def jacobian_plot(jacobians: dict, kernel, inputs=None, outputs=None, show_plot=True, show_colorbar=True,
                  scale_colors_per_submatrix=False, title=None, colormap="coolwarm", log_scale=False):
    """Draw `jacobians` ({(input index, output index): 2-D array (output scalars, input
    scalars)}) with matplotlib: a grid with a row per output and a column per input, each
    Jacobian an image (NaN entries, those not computed, left blank). `kernel` is the kernel
    or function they are of (with `inputs`, to name the arguments). Colours span all
    Jacobians together, or each one with `scale_colors_per_submatrix`; `log_scale` shows
    log10 |J|. Shows the figure when `show_plot`; returns it (None if there is nothing)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("weft.autograd.jacobian_plot needs matplotlib (pip install matplotlib)") from None
    del outputs  # accepted for Warp compatibility; the names come from `kernel`
    # (Jacobians as `jacobian` returns them, weft arrays in Warp's layout: as matrices)
    jacobians = {p: J.numpy().reshape(J.shape[0], -1) if isinstance(J, array) else J
                 for p, J in jacobians.items()}
    name, in_labels, out_labels = _labels(kernel, inputs, jacobians)
    if not jacobians:
        return None
    cols = sorted({i for i, _ in jacobians})
    rows = sorted({j for _, j in jacobians})
    images = {p: np.log10(np.abs(J) + 1e-12) if log_scale else np.asarray(J, dtype=np.float64)
              for p, J in jacobians.items()}
    finite = [v[np.isfinite(v)] for v in images.values()]
    finite = np.concatenate(finite) if finite else np.zeros(0)
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)

    widths = [max(jacobians[next(p for p in jacobians if p[0] == i)].shape[1], 1) for i in cols]
    heights = [max(jacobians[next(p for p in jacobians if p[1] == j)].shape[0], 1) for j in rows]
    fig, axes = plt.subplots(len(rows), len(cols), squeeze=False, figsize=(7, 7),
                             gridspec_kw={"width_ratios": widths, "height_ratios": heights})
    fig.suptitle(title or f"{name}: Jacobian{' (log10 |J|)' if log_scale else ''}")
    image = None
    for r, j in enumerate(rows):
        for c, i in enumerate(cols):
            ax = axes[r, c]
            if (i, j) not in images:
                ax.axis("off")
                continue
            data = images[i, j]
            lo, hi = vmin, vmax
            if scale_colors_per_submatrix:
                ok = data[np.isfinite(data)]
                lo, hi = (float(ok.min()), float(ok.max())) if ok.size else (0.0, 1.0)
            image = ax.imshow(data, cmap=colormap, vmin=lo, vmax=hi, aspect="auto", interpolation="nearest")
            ax.set_xlabel(in_labels[i])
            ax.set_ylabel(out_labels[j])
            if show_colorbar and scale_colors_per_submatrix:
                fig.colorbar(image, ax=ax)
    if show_colorbar and not scale_colors_per_submatrix and image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist())
    if show_plot:
        plt.show()
    return fig
