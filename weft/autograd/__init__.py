"""`weft.autograd`: check gradients, as `warp.autograd` does.

    J = weft.autograd.jacobian(kernel, dim=n, inputs=[x], outputs=[y])     # by adjoint launches
    J_fd = weft.autograd.jacobian_fd(kernel, dim=n, inputs=[x], outputs=[y])
    weft.autograd.gradcheck(kernel, dim=n, inputs=[x], outputs=[y])      # True, or ValueError
    weft.autograd.gradcheck_tape(tape)                                     # every recorded launch
    weft.autograd.jacobian_plot(J, kernel, inputs=[x])   # matplotlib; or a FunctionMetadata naming them

Jacobians are {(input index, output index): weft array}, in Warp's layout (rows: the
output's scalars; columns: the input's elements, of the input's dtype; see jacobian.py);
only float arrays with `requires_grad=True` take part. `function` may also be a Python
function that launches kernels and returns its output arrays.

    with weft.autograd.detect_anomaly():   # NaN/Inf in a launch's outputs, forward or
        ...                                # adjoint: AnomalyError naming the first bad op
"""

from .anomaly import AnomalyError, detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .check import gradcheck, gradcheck_tape
from .checkpoint import checkpoint
from .function import Function, FunctionCtx
from .jacobian import jacobian, jacobian_fd
from .plot import FunctionMetadata, jacobian_plot

__all__ = ["AnomalyError", "Function", "FunctionCtx", "FunctionMetadata", "checkpoint", "detect_anomaly", "gradcheck",
           "gradcheck_tape", "is_anomaly_enabled", "jacobian", "jacobian_fd", "jacobian_plot", "set_detect_anomaly"]
