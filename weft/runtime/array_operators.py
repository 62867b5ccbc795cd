"""Python's arithmetic operators on arrays, elementwise through `weft.map` (as in Warp):
`a + b`, `2.0 * a`, `-a`, `a ** 2.0`, and in place `a += 1.0` (which writes `a` itself).
Operands broadcast as `map`'s inputs do; a scalar operand is passed to every element. Each
operator is the kernel builtin of the same name, so an array expression means what it means
inside a kernel (integer `/` truncates, `%` keeps the dividend's sign, `mat * vec` is a
product, `pow` takes floats)."""

from __future__ import annotations

import numpy as np

from ..types.scalars import SCALAR_VALUES

# numpy's operator protocol: `np.float32(2) * a` (a numpy scalar on the left) is the
# array operator too; any other use of a ufunc computes on the arrays' numpy views
_UFUNCS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
           np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow"}
_UNARY_UFUNCS = {np.negative: "neg", np.positive: "pos"}


def _map(name: str, *args, out=None):
    from ..builtins.registry import BUILTINS
    from ..lang.mapping import map as weft_map  # (the frontend compiles the elementwise kernel)
    return weft_map(BUILTINS[name], *args, out=out)


def _binary(name: str):
    def op(self, other):
        return _map(name, self, _as_element_scalar(other, self))

    def rop(self, other):
        return _map(name, _as_element_scalar(other, self), self)

    def iop(self, other):
        _map(name, self, _as_element_scalar(other, self), out=self)
        return self
    return op, rop, iop


def _as_element_scalar(x, a):
    """A Python number beside array `a` takes the scalar type of `a`'s elements (as a literal
    does beside a value in a kernel: `a64 ** 2.0` is float64); a float beside integers stays
    a float (and the operator refuses the mix, as a kernel does)."""
    if type(x) not in (int, float):
        return x
    from ..types import Scalar
    scalar = a.dtype if isinstance(a.dtype, Scalar) else getattr(a.dtype, "dtype", None)
    if not isinstance(scalar, Scalar) or (isinstance(x, float) and not scalar.is_float):
        return x
    return scalar(x)


class ArrayOperators:
    """The operator methods shared by `array` and `indexedarray`."""

    __add__, __radd__, __iadd__ = _binary("add")
    __sub__, __rsub__, __isub__ = _binary("sub")
    __mul__, __rmul__, __imul__ = _binary("mul")
    __truediv__, __rtruediv__, __itruediv__ = _binary("div")
    __floordiv__, __rfloordiv__, __ifloordiv__ = _binary("floordiv")
    __mod__, __rmod__, __imod__ = _binary("mod")
    __pow__, __rpow__, __ipow__ = _binary("pow")

    def __neg__(self):
        return _map("neg", self)

    def __pos__(self):
        return _map("pos", self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:
            if ufunc in _UFUNCS and len(inputs) == 2 and all(_is_operand(x) for x in inputs):
                return _map(_UFUNCS[ufunc], *inputs)
            if ufunc in _UNARY_UFUNCS and len(inputs) == 1:
                return _map(_UNARY_UFUNCS[ufunc], inputs[0])
        inputs = tuple(x.numpy() if isinstance(x, ArrayOperators) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.numpy() if isinstance(x, ArrayOperators) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)


def _is_operand(x) -> bool:
    """An array or one value (a number, a weft scalar, a vector or matrix value)."""
    from ..types.values import CompositeValue
    return isinstance(x, (ArrayOperators, bool, int, float, *SCALAR_VALUES, CompositeValue))
