"""String annotations (`from __future__ import annotations`) resolve in the function's
globals and closure, for kernel parameters and struct fields."""

from __future__ import annotations

import weft as wp


@wp.struct
class Data:
    x: float
    v: wp.vec2


def make_kernel(dtype):
    def fn(d: Data, out: wp.array(dtype=dtype)):
        out[0] = dtype(d.x + d.v[1])  # dtype is read here, so it is in the closure
    return wp.kernel(fn)


def test_string_annotations_resolve_in_closure():
    assert Data.fields["x"] is wp.float32 and Data.fields["v"] is wp.vec2
    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(make_kernel(wp.float64), 1, inputs=[Data(1.5, wp.vec2(0.0, 2.0)), out])
    assert out.numpy()[0] == 3.5
