"""`wp.static(expr)`: evaluated in Python while the kernel compiles."""

import numpy as np
import pytest

import weft as wp

_shadowed = 999  # a global with the name of a loop index below


@wp.struct
class Pair:
    v: wp.vec3
    n: int


@wp.struct
class WithArray:
    a: wp.array(dtype=float)
    n: int


PAIR = Pair(wp.vec3(1.0, 2.0, 3.0), 4)


@wp.kernel
def unrolled(v: wp.vec2, out: wp.array(dtype=int)):
    for _shadowed in range(3):  # the index is a constant in each unrolled copy
        out[_shadowed] = wp.static(_shadowed * 2 + 1)
    s = 0
    for i in range(10):
        if wp.static(i % 2 == 0):
            continue
        if wp.static(i > 7):
            break
        s += i
    out[3] = s
    out[4] = wp.static(len(v) + len(wp.vec4()))  # a local's length is part of its type
    p = wp.static(PAIR)  # a struct value from Python scope
    out[5] = p.n + int(p.v[2])


def test_unrolled_loops_lengths_and_struct_values():
    out = wp.zeros(6, dtype=int)
    wp.launch(unrolled, 1, inputs=[wp.vec2(), out])
    assert out.numpy().tolist() == [1, 3, 5, 1 + 3 + 5 + 7, 6, 7]


def test_static_errors_read_like_warps():
    def run(kernel):
        with pytest.raises(wp.CompileError) as e:
            wp.launch(kernel, 1, inputs=[1, wp.zeros(1)])
        return str(e.value)

    @wp.kernel
    def uses_runtime_value(x: int, out: wp.array(dtype=float)):
        out[0] = float(wp.static(x * 2))
    assert "Error evaluating static expression: name 'x' is not defined. Make sure all " \
        "variables used in the static expression are constant." in run(uses_runtime_value)

    @wp.kernel
    def divides_by_zero(x: int, out: wp.array(dtype=float)):
        out[0] = wp.static(1.0 / 0.0)
    assert "Error evaluating static expression: float division by zero" in run(divides_by_zero)

    @wp.kernel
    def returns_none(x: int, out: wp.array(dtype=float)):
        out[0] = wp.static(print())
    assert "Static expression returns an unsupported value: None is returned" in run(returns_none)

    held = WithArray()
    held.a = wp.zeros(2)

    @wp.kernel
    def returns_struct_with_array(x: int, out: wp.array(dtype=float)):
        s = wp.static(held)
        out[0] = float(s.n)
    message = run(returns_struct_with_array)
    assert "a Warp array cannot be created inside Warp kernels at" in message
    assert "WithArray.a" in message


@wp.kernel
def static_of_constant_local(out: wp.array(dtype=int)):
    n = 3  # a local holding a constant is that constant in static expressions
    out[0] = wp.static(n * 2)


def test_constant_locals_are_visible_to_static():
    out = wp.zeros(1, dtype=int)
    wp.launch(static_of_constant_local, 1, inputs=[out])
    assert out.numpy()[0] == 6


def test_static_expressions_are_evaluated_when_the_kernel_is_defined():
    reads = []

    def value():
        reads.append(1)
        return 3

    kernels = []
    for scale in (1, 2):
        @wp.kernel
        def k(out: wp.array(dtype=int)):
            out[0] = wp.static(value() * scale)  # noqa: B023 - bound now, per definition
        kernels.append(k)
    assert len(reads) == 2  # once per definition, before any launch
    out = wp.zeros(1, dtype=int)
    got = []
    for k in kernels:
        wp.launch(k, 1, inputs=[out])
        got.append(int(out.numpy()[0]))
    assert got == [3, 6] and len(reads) == 2


FUNC_GAIN = 2.0


@wp.func
def gain_at_definition(x: float):
    return x * wp.static(FUNC_GAIN)


FUNC_GAIN = 7.0  # (rebound after the func was defined: the func keeps 2.0, as in Warp)


def test_static_expressions_are_evaluated_when_the_func_is_defined():
    reads = []

    def value():
        reads.append(1)
        return 3.0

    funcs = []
    for scale in (1.0, 2.0, 3.0):
        @wp.func
        def scaled(x: float):
            return x * wp.static(value() * scale)  # noqa: B023 - bound now, per definition
        funcs.append(scaled)
    assert len(reads) == 3

    @wp.kernel
    def k(out: wp.array(dtype=float)):
        out[0] = wp.static(funcs[0])(1.0)
        out[1] = wp.static(funcs[1])(1.0)
        out[2] = wp.static(funcs[2])(1.0)
        out[3] = gain_at_definition(1.0)

    out = wp.zeros(4, dtype=float)
    wp.launch(k, 1, inputs=[out])
    assert out.numpy().tolist() == [3.0, 6.0, 9.0, 2.0] and len(reads) == 3


def test_unique_kernels_with_unresolved_statics_compile_when_declared():
    # As Warp, which names a unique module by its compiled content: a static that could not
    # be evaluated at definition (it failed, or reads a local) is resolved by the
    # declaration, so a failing one raises there, and one that succeeds leaves no module.
    from weft.lang import module as modules

    def make(d):
        @wp.kernel(module="unique")
        def k(out: wp.array(dtype=float)):
            out[wp.tid()] = wp.static(d["v"])
        return k

    k = make({"v": 5.0})
    assert not k.adj.has_unresolved_static_expressions
    before = set(modules._MODULES)
    with pytest.raises(wp.WarpCodegenError, match="Error evaluating static expression: 'v'") as e:
        make({})
    assert "out[wp.tid()] = wp.static(d[\"v\"])" in str(e.value)
    assert set(modules._MODULES) == before  # the failed declaration left no module behind

    def pick(fs):
        @wp.kernel(module="unique")
        def k(out: wp.array(dtype=float)):
            for i in range(2):
                out[i] = wp.static(fs[i])(1.0)  # reads the loop's index: compiled when declared
        return k

    k = pick([wp.sin, wp.cos])
    assert k.adj.has_unresolved_static_expressions and k._ir  # compiled already
    out = wp.zeros(2)
    wp.launch(k, 1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [np.sin(1.0), np.cos(1.0)], rtol=1e-6)


_index_name = 10  # a global named like a loop index below


def test_loop_index_outside_its_loop_reads_the_global():
    """A loop index is the kernel's own only inside its loop: a `static` after the loop
    reading the same name sees the global (as Warp does), in a plain kernel and in one whose
    AST a transformer rewrote so that one `static` call node sits in both places."""
    import ast

    @wp.kernel
    def plain(out: wp.array(dtype=int)):
        for _index_name in range(2):
            out[_index_name] = wp.static(_index_name + 1)
        out[2] = wp.static(_index_name + 1)

    def raw(out: wp.array(dtype=int)):
        for _index_name in range(2):
            out[_index_name] = wp.static(_index_name + 1) + wp.static(0)
        out[2] = 0

    class Reuse(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            node.body[1].value = node.body[0].body[0].value.left  # the same Call node
            return node

    reused = wp.Kernel(raw, module=wp.get_module("test_static_reused_index"), code_transformers=[Reuse()])
    for k in (plain, reused):
        out = wp.zeros(3, dtype=int)
        wp.launch(k, dim=1, inputs=[out])
        np.testing.assert_array_equal(out.numpy(), [1, 2, 11])


def test_loop_index_outside_its_loop_without_global_is_its_last_value():
    @wp.kernel
    def k(out: wp.array(dtype=int)):
        for j in range(3):
            out[j] = wp.static(j)
        out[3] = wp.static(j * 10)  # no global `j`: the index's last value, as in Python

    out = wp.zeros(4, dtype=int)
    wp.launch(k, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 20])


_static_alias = None


def test_an_alias_of_static_is_resolved_when_the_kernel_is_defined():
    # (as Warp: rebinding the alias before the first launch changes nothing)
    global _static_alias
    _static_alias = wp.static

    @wp.kernel(module="unique")
    def k(out: wp.array(dtype=wp.int32)):
        out[0] = _static_alias(3 + 4)

    def replacement(value):
        return -value

    _static_alias = replacement
    out = wp.zeros(1, dtype=wp.int32)
    wp.launch(k, dim=1, inputs=[out])
    assert out.numpy()[0] == 7
