"""The IR's text form (golden) and the verifier's invariants."""

import pytest

import weft as wp
from weft.ir import Block, Function, Op, VerifyError, format_function, verify
from weft.ir.builder import Builder
from weft.ir.passes import dead_code, run_pipeline
from weft.types import float32, int32


@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i]


def test_golden_text_of_a_kernel():
    assert format_function(scale.ir()) == """\
kernel scale(%x0: array(dtype=float32, ndim=1), %y1: array(dtype=float32, ndim=1), %a2: float32) {
  %3: int32 = tid {dim=-1, of=1}
  %4: float32 = load %x0, %3
  %5: float32 = binary %a2, %4 {op='mul'}
  store %y1, %3, %5
  return
}"""


@wp.kernel
def loop_sum(x: wp.array(dtype=float), n: int):
    s = 0.0
    for k in range(n):
        s = s + float(k)
    x[0] = s


def test_loop_carried_values_are_block_arguments():
    text = format_function(loop_sum.ir())
    assert "for %" in text and "^(%k" in text and "%s" in text  # iv and carried s
    fn = loop_sum.ir()
    loop = next(op for op in fn.body.ops if op.name == "for")
    assert [a.type for a in loop.regions[0].args] == [int32, float32]
    assert [r.type for r in loop.results] == [float32]


def _function_with(ops_builder):
    fn = Function("f", "kernel", [], [])
    b = Builder(fn.body)
    ops_builder(b)
    b.op("return", [])
    return fn


def test_verifier_rejects_mismatched_binary_types():
    def build(b):
        x = b.const(1.0, float32)
        y = b.const(1, int32)
        b.block.ops.append(Op("binary", [x, y], [float32], {"op": "add"}))
    with pytest.raises(VerifyError, match="binary operands must be one scalar type"):
        verify(_function_with(build))


def test_verifier_rejects_use_before_definition_and_marks_the_op():
    def build(b):
        other = Block([float32])
        b.op("binary", [other.args[0], other.args[0]], [float32], {"op": "add"})
    with pytest.raises(VerifyError, match="used before its definition") as e:
        verify(_function_with(build))
    assert "<<< here" in str(e.value)


def test_verifier_rejects_unknown_ops_and_missing_terminators():
    def unknown(b):
        b.op("frobnicate", [], [])
    with pytest.raises(VerifyError, match="unknown op"):
        verify(_function_with(unknown))
    fn = Function("g", "kernel", [], [])
    with pytest.raises(VerifyError, match="terminator"):
        verify(fn)


def test_dead_code_removes_unused_pure_ops_only():
    def build(b):
        b.const(1.0, float32)  # unused: removed
        b.op("print", [b.const(2, int32)], [], {"fmt": (None, "\n")})  # effect: kept
    fn = run_pipeline(_function_with(build))
    fn = dead_code(fn)
    names = [op.name for op in fn.body.ops]
    assert names == ["const", "print", "return"]


def test_dead_code_removes_a_dead_chain_and_what_only_pruned_if_results_used():
    def build(b):
        x = b.const(1.0, float32)
        for _ in range(50):  # a chain: each op feeds only the next, the last is unused
            x = b.op("binary", [x, x], [float32], {"op": "add"}).results[0]
        cond = b.const(True, wp.bool)
        feeds_if = b.op("binary", [b.const(3.0, float32), b.const(4.0, float32)], [float32], {"op": "mul"}).results[0]
        then, other = Block([]), Block([])
        Builder(then).op("print", [b.const(5, int32)], [], {"fmt": (None, "\n")})
        Builder(then).op("yield", [feeds_if])
        Builder(other).op("yield", [feeds_if])
        b.op("if", [cond], [float32], {}, [then, other])  # kept for its print; result unused
    fn = dead_code(_function_with(build))
    verify(fn)
    names = [op.name for op in fn.body.ops]
    assert "binary" not in names  # the chain and the if result's only producer are gone
    if_op = next(op for op in fn.body.ops if op.name == "if")
    assert if_op.results == [] and [op.name for op in if_op.regions[0].ops] == ["print", "yield"]


@wp.func
def twice(v: float) -> float:
    return v + v


@wp.kernel
def uses_func(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = twice(x[i])


def test_funcs_are_inlined_and_the_result_verifies():
    fn = uses_func.ir()
    names = [op.name for op in fn.body.ops]
    assert "call_func" not in names
    verify(fn)
