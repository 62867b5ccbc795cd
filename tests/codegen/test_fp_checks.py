"""codegen/fp_checks.py: the checked variant of a kernel reports the first operation that
made a non-finite value reach memory, with its operands; the code ordinary launches run
has none of these checks."""

import numpy as np

import weft as wp
from weft.autograd.anomaly import _compile_checked, _run_serial
from weft.codegen.fp_checks import FPSite


@wp.kernel
def mixed(x: wp.array(dtype=float), y: wp.array(dtype=float), flags: wp.array(dtype=int)):
    i = wp.tid()
    a = x[i]
    discarded = wp.sqrt(a)  # NaN for a < 0, never stored
    flags[i] = int(discarded > 0.0)
    b = wp.where(a > 0.0, wp.log(a), a * 1.0e30)
    y[i] = b * 1.0e10  # overflows for a <= -1e-2: a * 1e30 is finite, * 1e10 is not


def checked_report(kernel, params, dims, check_loads=False):
    ck = kernel.compiled(kernel.specialization(params))
    checked = _compile_checked(kernel, ck, params, False, check_loads)
    ctx = _run_serial(checked, dims, params)
    return checked.sites.get(ctx.error_site), (FPSite.decode(ctx) if ctx.error_site else None)


def test_the_first_operation_that_reaches_memory_is_reported_with_its_operands():
    x = wp.array(np.array([4.0, -1.0, 2.0], dtype=np.float32))
    y = wp.zeros(3, dtype=float)
    flags = wp.zeros(3, dtype=int)
    site, data = checked_report(mixed, [x, y, flags], (3,))
    # thread 1: sqrt(-1) is NaN but only compared (not stored); log(-1) is NaN but `where`
    # drops it; -1 * 1e30 is finite; * 1e10 overflows and is stored
    assert isinstance(site, FPSite) and site.what == "mul" and site.kind == "op"
    assert data["thread"] == 1 and data["operands"] == [float(np.float32(-1.0e30)), 1.0e10]
    assert np.isneginf(data["result"])
    with open(__file__) as f:
        stored = next(n for n, text in enumerate(f, 1) if text.lstrip().startswith("y[i] = b * 1.0e10"))
    assert site.op.loc.line == stored


def test_finite_runs_report_nothing_and_plain_kernels_have_no_checks():
    x = wp.array(np.array([4.0, 1.0], dtype=np.float32))
    site, data = checked_report(mixed, [x, wp.zeros(2, dtype=float), wp.zeros(2, dtype=int)], (2,))
    assert site is None and data is None
    assert "weft_fp_events" not in mixed.llvm_ir()


def test_a_non_finite_input_is_found_only_when_loads_are_checked():
    @wp.kernel
    def scale(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * 2.0

    x = wp.array(np.array([1.0, np.inf], dtype=np.float32))
    y = wp.zeros(2, dtype=float)
    site, data = checked_report(scale, [x, y], (2,))
    assert site.kind == "write" and site.what == "store" and data["thread"] == 1
    site, data = checked_report(scale, [x, y], (2,), check_loads=True)
    assert site.kind == "load" and data["thread"] == 1 and np.isposinf(data["result"])
