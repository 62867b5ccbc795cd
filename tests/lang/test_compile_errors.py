"""Compile errors: each is a weft.CompileError that shows `file:line:col`, the offending
source line and a caret under the offending code, then the message last (so that Warp's
`$`-anchored patterns match it), with no weft internals in the traceback.

Every kernel here takes one float array and fails to compile on its first launch.
"""

import inspect
import os
import random

import numpy as np
import pytest

import weft as wp


def compile_error(kernel) -> wp.CompileError:
    with pytest.raises(wp.CompileError) as excinfo:
        wp.launch(kernel, 1, inputs=[wp.zeros(1, dtype=float)])
    return excinfo.value


def source_line(kernel, fragment) -> int:
    """The file line number of the first line of `kernel`'s source containing `fragment`."""
    lines, first = inspect.getsourcelines(kernel.__wrapped__)
    for k, text in enumerate(lines):
        if fragment in text:
            return first + k
    raise AssertionError(f"{fragment!r} is not in the source of {kernel}")


def check_points_at(err, kernel, where, message):
    """The error names this file and the line holding `where`, shows that line, and puts the
    caret under the first character of `where`. `where` may be a pair (text on the line,
    text the caret is under) where the caret is not at the line's first match."""
    line_text, caret_text = where if isinstance(where, tuple) else (where, where)
    text = str(err)
    head, shown, caret, *rest = text.splitlines()
    line = source_line(kernel, line_text)
    assert head.startswith(f"{__file__}:{line}:") and head.endswith(":"), text
    assert "\n".join(rest) == err.bare_message and text.endswith(err.bare_message), text
    assert message in err.bare_message, text
    assert shown.strip() == open(__file__).read().splitlines()[line - 1].strip()
    assert caret.strip() == "^", text
    column = shown.index(line_text) + line_text.index(caret_text)
    assert column == len(caret) - 1, text


# Unsupported syntax ------------------------------------------------------------------------


@wp.kernel
def uses_lambda(a: wp.array(dtype=float)):
    f = lambda x: x  # noqa: E731
    a[0] = f(1.0)


@wp.kernel
def uses_list_comprehension(a: wp.array(dtype=float)):
    b = [float(j) for j in range(3)]
    a[0] = b[0]


@wp.kernel
def uses_with(a: wp.array(dtype=float)):
    with open("x") as f:
        a[0] = f


@wp.kernel
def uses_try(a: wp.array(dtype=float)):
    try:
        a[0] = 1.0
    except Exception:
        pass


@wp.kernel
def uses_slice(a: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    n = wp.tid()
    w = v[0:n]
    a[0] = w[0]


@wp.kernel
def uses_nested_def(a: wp.array(dtype=float)):
    def helper():
        return 1.0
    a[0] = helper()


@wp.kernel
def uses_global_statement(a: wp.array(dtype=float)):
    global SOMETHING
    a[0] = 1.0


@wp.kernel
def uses_dict(a: wp.array(dtype=float)):
    d = {"x": 1.0}
    a[0] = d["x"]


@wp.kernel
def uses_string_method(a: wp.array(dtype=float)):
    a[0] = "abc".upper()


@wp.kernel
def uses_local_ones(a: wp.array(dtype=float)):
    b = wp.ones(shape=3, dtype=float)
    a[0] = b[0]


@pytest.mark.parametrize("kernel,caret_at,message", [
    (uses_local_ones, "wp.ones(", "ones() inside a kernel: only zeros(shape, dtype) makes a (fixed-size"),
    (uses_lambda, "lambda x", "Construct `ast.Lambda` not supported in kernels"),
    (uses_list_comprehension, "[float(j)", "Construct `ast.ListComp` not supported in kernels"),
    (uses_with, "with open", "Construct `ast.With` not supported in kernels"),
    (uses_try, "try:", "Construct `ast.Try` not supported in kernels"),
    (uses_slice, ("w = v[0:n]", "n"), "slice bounds of vectors and matrices must be compile-time integer constants"),
    (uses_nested_def, "def helper", "nested function"),
    (uses_global_statement, "global SOMETHING", "Construct `ast.Global` not supported in kernels"),
    (uses_dict, '{"x"', "Construct `ast.Dict` not supported in kernels"),
], ids=lambda x: getattr(x, "name", None))
def test_unsupported_syntax(kernel, caret_at, message):
    check_points_at(compile_error(kernel), kernel, caret_at, message)


def test_string_value_is_not_a_kernel_value():
    err = compile_error(uses_string_method)
    assert f"{__file__}:{source_line(uses_string_method, '.upper()')}:" in str(err)


# Names and types -----------------------------------------------------------------------------


@wp.kernel
def undefined_name(a: wp.array(dtype=float)):
    a[0] = 1.0 + no_such_name  # noqa: F821


@wp.kernel
def mixes_float32_and_float64(a: wp.array(dtype=float)):
    d = wp.float64(2.0)
    a[0] = float(a[0] * d)


@wp.kernel
def mixes_int32_and_int64(a: wp.array(dtype=float)):
    k = 3
    big = wp.int64(4)
    a[0] = float(k + big)


@wp.kernel
def int_times_fraction(a: wp.array(dtype=float)):
    k = 3
    a[0] = float(k * 1.5)


@wp.kernel
def stores_wrong_type(a: wp.array(dtype=float)):
    k = 3
    a[0] = k


@wp.kernel
def rebinds_with_other_type(a: wp.array(dtype=float)):
    x = 1.0
    k = 2
    x = k
    a[0] = x


@wp.kernel
def branches_disagree(a: wp.array(dtype=float)):
    if a[0] > 0.0:
        x = 1.0
    else:
        x = 2
    a[0] = float(x)


@wp.kernel
def loop_changes_type(a: wp.array(dtype=float)):
    s = 0
    for j in range(3):
        s = float(j)
    a[0] = s


@wp.kernel
def literal_too_big(a: wp.array(dtype=float)):
    k = 3000000000
    a[0] = float(k)


@wp.kernel
def conditional_expression_types(a: wp.array(dtype=float)):
    x = a[0]
    y = x if x > 0.0 else wp.float64(1.0)
    a[0] = float(y)


@wp.kernel
def conditional_expression_fraction_for_int(a: wp.array(dtype=float)):
    k = 3
    a[0] = float(k if a[0] > 0.0 else 1.5)


@wp.kernel
def vector_as_condition(a: wp.array(dtype=float)):
    v = wp.vec3()
    if v:
        a[0] = 1.0


@wp.kernel
def rebinds_array_parameter(a: wp.array(dtype=float)):
    a = a.shape[0]
    a[0] = 1.0


@wp.kernel
def unpacks_too_many(a: wp.array(dtype=float)):
    x, y = wp.vec3()
    a[0] = x + y


@wp.kernel
def compares_vectors_by_order(a: wp.array(dtype=float)):
    b = wp.vec3() < wp.vec3()
    a[0] = float(b)


@wp.kernel
def bool_arithmetic(a: wp.array(dtype=float)):
    b = a[0] > 0.0
    a[0] = float(b + b)


@wp.kernel
def bitwise_on_float(a: wp.array(dtype=float)):
    a[0] = a[0] & 1.0


@wp.kernel
def constant_division_by_zero(a: wp.array(dtype=float)):
    a[0] = 1 / 0


@wp.kernel
def iterates_over_a_list(a: wp.array(dtype=float)):
    for x in [1.0, 2.0]:
        a[0] = x


@wp.kernel
def chained_assignment(a: wp.array(dtype=float)):
    x = y = 1.0
    a[0] = x + y


@wp.kernel
def kernel_returns_value(a: wp.array(dtype=float)):
    return a[0]


@wp.kernel
def calls_python_random(a: wp.array(dtype=float)):
    a[0] = random.random()  # (folded once at compile time, it would be one number everywhere)


@wp.kernel
def too_many_indices(a: wp.array(dtype=float)):
    a[0, 1] = 1.0


@wp.kernel
def float_index_read(a: wp.array(dtype=float)):
    x = 1.5
    a[0] = a[x]


@wp.kernel
def float_index(a: wp.array(dtype=float)):
    x = 1.0
    a[x] = 1.0


@wp.kernel
def vector_index_out_of_range(a: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    a[0] = v[3]


@wp.kernel
def bad_attribute(a: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    a[0] = v.w


@pytest.mark.parametrize("kernel,caret_at,message", [
    (undefined_name, "no_such_name", "Referencing undefined symbol: no_such_name"),
    (mixes_float32_and_float64, "a[0] * d", "different types float32 and float64"),
    (mixes_int32_and_int64, "k + big", "different types int32 and int64"),
    (int_times_fraction, "k * 1.5", "Input types must be the same, got ['int32', 'float32']"),
    (stores_wrong_type, "a[0] = k", "int32"),
    (rebinds_with_other_type, "x = k", "'x' has type int32 but float32 is expected"),
    (branches_disagree, "if a[0] > 0.0", "'x' is float32 in one branch and int32 in the other"),
    (loop_changes_type, "s = float(j)", "'s' has type float32 but int32 is expected"),
    (literal_too_big, "k = 3000000000", "the constant 3000000000 does not fit int32"),
    (kernel_returns_value, "return a[0]", "kernels cannot return values"),
    (conditional_expression_types, "x if x > 0.0",
     "the conditional expression is float32 in one branch and float64 in the other"),
    (conditional_expression_fraction_for_int, "k if a[0]", "the constant 1.5 does not fit int32"),
    (vector_as_condition, "if v:", "a vec3f cannot be used as a condition"),
    (rebinds_array_parameter, "a = a.shape[0]", "cannot rebind array parameter 'a'"),
    (unpacks_too_many, "x, y = wp.vec3()", "cannot unpack 3 values into 2 names"),
    (compares_vectors_by_order, "wp.vec3() < wp.vec3()", "cannot compare vec3f with vec3f"),
    (bool_arithmetic, "b + b", "arithmetic on bool values"),
    (bitwise_on_float, "a[0] & 1.0", "'&' needs integer operands"),
    (constant_division_by_zero, "1 / 0", "division by zero"),
    (iterates_over_a_list, "[1.0, 2.0]", "for loops must iterate over range(...)"),
    (chained_assignment, "x = y = 1.0", "chained assignment"),
    (calls_python_random, "random.random()", "not a weft builtin or @weft.func, so it cannot be called inside "
     "a kernel: mark it @weft.func, or write wp.static(random.random(...))"),
    (too_many_indices, "a[0, 1]", "too many indices"),
    (float_index, ("a[x]", "x]"), "Array slot write indices must be integers, got float32"),
    (float_index_read, ("a[x]", "x]"), "Array indices must be integers, got float32"),
    (vector_index_out_of_range, "v[3]", "index 3 is out of range"),
    (bad_attribute, "v.w", "has no attribute 'w'"),
], ids=lambda x: getattr(x, "name", None))
def test_names_and_types(kernel, caret_at, message):
    check_points_at(compile_error(kernel), kernel, caret_at, message)




# Builtin arguments -----------------------------------------------------------------------------


@wp.kernel
def sin_two_args(a: wp.array(dtype=float)):
    a[0] = wp.sin(a[0], 2.0)


@wp.kernel
def dot_with_scalar(a: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    a[0] = wp.dot(v, 1.0)


@wp.kernel
def cross_of_vec2(a: wp.array(dtype=float)):
    v = wp.vec2(1.0, 2.0)
    a[0] = wp.cross(v, v)[0]


@wp.kernel
def sqrt_of_int(a: wp.array(dtype=float)):
    k = 4
    a[0] = wp.sqrt(k)


@wp.kernel
def vec3_from_four(a: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0, 4.0)
    a[0] = v[0]


@wp.kernel
def atomic_on_local(a: wp.array(dtype=float)):
    x = 1.0
    wp.atomic_add(x, 0, 1.0)
    a[0] = x


@wp.kernel
def randf_without_state(a: wp.array(dtype=float)):
    a[0] = wp.randf(3)


@wp.kernel
def matrix_times_wrong_vector(a: wp.array(dtype=float)):
    m = wp.mat33()
    v = wp.vec2(1.0, 2.0)
    a[0] = (m * v)[0]


@wp.kernel
def assigns_in_place_update(a: wp.array(dtype=float)):
    t = wp.transform_identity()
    t = wp.transform_set_translation(t, wp.vec3(1.0, 2.0, 3.0))
    a[0] = t.p[0]


@wp.kernel
def length_of_scalar(a: wp.array(dtype=float)):
    a[0] = wp.length(a[0])


@wp.kernel
def normalize_int_vector(a: wp.array(dtype=float)):
    v = wp.normalize(wp.vec3i(1, 2, 3))
    a[0] = float(v[0])


@wp.kernel
def tile_max_with_axis(a: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=1)
    wp.tile_store(a, wp.tile_max(t, axis=0))  # (Warp's tile_max has no axis: not ignored)


@wp.kernel
def tile_max_with_two_arguments(a: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=1)
    wp.tile_store(a, wp.tile_max(t, 0))


@wp.kernel
def tile_sum_with_unknown_keyword(a: wp.array(dtype=float)):
    wp.tile_store(a, wp.tile_sum(wp.tile_load(a, shape=1), keepdims=True))


@pytest.mark.parametrize("kernel,caret_at,message", [
    (length_of_scalar, "wp.length(a[0])", "length() needs a vector, got float32"),
    (tile_max_with_axis, "wp.tile_max(t, axis=0)", "tile_max() got an unexpected keyword argument 'axis' "
     "(its forms: tile_max(a))"),
    (tile_max_with_two_arguments, "wp.tile_max(t, 0)", "tile_max() takes at most 1 argument(s), got 2"),
    (tile_sum_with_unknown_keyword, "wp.tile_sum(", "tile_sum() got an unexpected keyword argument 'keepdims'"),
    (normalize_int_vector, "wp.normalize(", "normalize() needs a float vector, got vec3i"),
    (assigns_in_place_update, ("t = wp.transform_set", "wp.transform_set"), "the call assigned to 't' returns nothing"),
    (sin_two_args, "wp.sin(a[0], 2.0)", "sin() takes one argument"),
    (dot_with_scalar, "wp.dot(v, 1.0)", "dot() needs a vector"),
    (cross_of_vec2, "wp.cross(v, v)", "cross() needs a vector of length 3"),
    (sqrt_of_int, "wp.sqrt(k)", "sqrt()"),
    (vec3_from_four, "wp.vec3(1.0, 2.0, 3.0, 4.0)",
     "vec3f() takes 3 components: incompatible number of values given (4) when constructing a vector of length 3"),
    (atomic_on_local, "wp.atomic_add(x", "needs an array"),
    (randf_without_state, "wp.randf(3)", "random state"),
    (matrix_times_wrong_vector, "m * v", "shapes do not match"),
], ids=lambda x: getattr(x, "name", None))
def test_wrong_builtin_arguments(kernel, caret_at, message):
    check_points_at(compile_error(kernel), kernel, caret_at, message)


# Errors inside funcs, and indented kernels -------------------------------------------------


@wp.func
def broken_func(x: float) -> float:
    return x + wp.float64(1.0)


@wp.kernel
def calls_broken_func(a: wp.array(dtype=float)):
    a[0] = broken_func(a[0])


def test_error_inside_a_func_points_into_the_func():
    err = compile_error(calls_broken_func)
    check_points_at(err, broken_func, "x + wp.float64", "different types")


@wp.func
def calls_broken_func_twice_removed(x: float) -> float:
    return broken_func(x) * 2.0


@wp.kernel
def calls_through_two_funcs(a: wp.array(dtype=float)):
    a[0] = calls_broken_func_twice_removed(a[0])


def test_error_inside_a_func_names_its_call_sites_innermost_first():
    err = compile_error(calls_through_two_funcs)
    check_points_at(err, broken_func, "x + wp.float64", "different types")
    head = str(err).splitlines()[0]
    via = source_line(calls_broken_func_twice_removed, "broken_func(x)")
    site = source_line(calls_through_two_funcs, "calls_broken_func_twice_removed(a[0])")
    assert head.endswith(f"in broken_func (called from calls_broken_func_twice_removed at {__file__}:{via}:12, "
                         f"called from calls_through_two_funcs at {__file__}:{site}:12):"), head


@wp.func
def typed_param(x: float) -> float:
    return x


@wp.kernel
def func_wrong_argument(a: wp.array(dtype=float)):
    a[0] = typed_param(wp.vec3(1.0, 2.0, 3.0))


def test_func_called_with_wrong_argument_type():
    check_points_at(compile_error(func_wrong_argument), func_wrong_argument, "typed_param(",
                    "typed_param")


def test_kernel_defined_inside_a_function_reports_true_columns():
    @wp.kernel
    def indented(a: wp.array(dtype=float)):
        a[0] = 1.0 + missing_name  # noqa: F821

    check_points_at(compile_error(indented), indented, "missing_name", "Referencing undefined symbol")


def test_error_message_names_the_kernel():
    assert "in undefined_name:" in str(compile_error(undefined_name))


def test_compile_error_is_a_weft_error():
    assert issubclass(wp.CompileError, wp.WeftError)


# What the user sees ----------------------------------------------------------------------------

WEFT_DIR = os.path.dirname(wp.__file__)


def weft_frames(excinfo):
    return [(os.path.relpath(str(entry.path), WEFT_DIR), entry.name) for entry in excinfo.traceback
            if str(entry.path).startswith(WEFT_DIR + os.sep)]


@pytest.mark.parametrize("kernel", [uses_lambda, mixes_float32_and_float64, calls_broken_func,
                                    float_index], ids=lambda k: k.name)
def test_traceback_has_no_compiler_internals(kernel):
    with pytest.raises(wp.CompileError) as excinfo:
        wp.launch(kernel, 1, inputs=[wp.zeros(1, dtype=float)])
    frames = weft_frames(excinfo)
    # The launch entry, and (until launch trims it) the kernel's compile step.
    launch = (os.path.join("runtime", "launch.py"), "launch")
    assert frames[0] == launch
    assert set(frames) <= {launch, (os.path.join("lang", "kernel.py"), "compiled")}
    assert excinfo.value.__cause__ is None and excinfo.value.__suppress_context__


def test_traceback_shows_only_the_launch_entry():
    with pytest.raises(wp.CompileError) as excinfo:
        wp.launch(uses_lambda, 1, inputs=[wp.zeros(1, dtype=float)])
    assert weft_frames(excinfo) == [(os.path.join("runtime", "launch.py"), "launch")]


def test_recorded_launch_compile_error_is_trimmed_too():
    with pytest.raises(wp.CompileError) as excinfo:
        wp.launch(undefined_name, 1, inputs=[wp.zeros(1, dtype=float)], record_cmd=True)
    assert all(path != os.path.join("lang", "frontend.py") for path, _ in weft_frames(excinfo))


def test_kernel_with_unannotated_parameter():
    """Refused where it is defined, as Warp does (its RuntimeError, and a TypeError)."""
    for kind in (RuntimeError, TypeError):
        with pytest.raises(kind, match="incomplete argument annotations: parameter 'a' needs a type annotation"):
            @wp.kernel
            def unannotated(a, b: float):
                a[0] = b


def test_error_then_fixed_kernel_compiles():
    """A failed compile leaves nothing behind: a working kernel still compiles and runs."""
    compile_error(undefined_name)

    @wp.kernel
    def fine(a: wp.array(dtype=float)):
        a[0] = 5.0

    a = wp.array(np.zeros(1, np.float32))
    wp.launch(fine, 1, inputs=[a])
    assert a.numpy()[0] == 5.0
