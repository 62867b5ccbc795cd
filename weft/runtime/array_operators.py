"""Python's arithmetic operators on arrays, elementwise through `weft.map` (as in Warp):
`a + b`, `2.0 * a`, `-a`, `a ** 2.0`, and in place `a += 1.0` (which writes `a` itself).
Operands broadcast as `map`'s inputs do; a scalar operand is passed to every element."""

from __future__ import annotations


def _map(name: str, *args, out=None):
    from ..builtins.registry import BUILTINS
    from ..lang.mapping import map as weft_map  # (the frontend compiles the elementwise kernel)
    return weft_map(BUILTINS[name], *args, out=out)


def _binary(name: str):
    def op(self, other):
        return _map(name, self, other)

    def rop(self, other):
        return _map(name, other, self)

    def iop(self, other):
        _map(name, self, other, out=self)
        return self
    return op, rop, iop


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
