"""A user's subclasses of the array classes (Warp allows them): constructors with their own
arguments, launches of concrete and generic kernels, explicit overloads from instances,
gradients, and the family they belong to."""

from typing import Any

import numpy as np

import weft as wp
from weft.types import concrete_array_type


class TaggedArray(wp.array):
    def __init__(self, *args, tag, **kwargs):
        self.tag = tag
        super().__init__(*args, **kwargs)


class DeeperArray(TaggedArray):
    pass


class TaggedIndexedArray(wp.indexedarray):
    def __init__(self, *args, tag, **kwargs):
        self.tag = tag
        super().__init__(*args, **kwargs)


@wp.kernel
def double_into(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * 2.0


@wp.kernel
def double_any(a: Any, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * 2.0


@wp.kernel
def first_of_rows(a: wp.array2d(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    row = a[i]
    out[i] = row[0]


@wp.kernel
def square(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * a[i]


def test_constructors_take_the_subclass_arguments_and_keep_the_class():
    a = DeeperArray(tag="data", data=np.arange(4, dtype=np.float32), dtype=float)
    b = TaggedArray(tag="zeros", shape=3, dtype=float)
    ia = TaggedIndexedArray(tag="indexed", data=a, indices=wp.array([3, 1], dtype=wp.int32))
    assert type(a) is DeeperArray and a.tag == "data" and a.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert type(b) is TaggedArray and b.shape == (3,) and ia.tag == "indexed" and ia.shape == (2,)
    assert concrete_array_type(a) is wp.array and concrete_array_type(ia) is wp.indexedarray


def test_concrete_and_generic_kernels_take_subclass_instances():
    a = DeeperArray(tag="in", data=np.arange(1, 5, dtype=np.float32), dtype=float)
    ia = TaggedIndexedArray(tag="perm", data=a, indices=wp.array([3, 1, 0, 2], dtype=wp.int32))
    out = TaggedArray(tag="out", shape=4, dtype=float)
    wp.launch(double_into, 4, inputs=[a], outputs=[out])
    assert out.numpy().tolist() == [2.0, 4.0, 6.0, 8.0] and out.tag == "out"
    wp.launch(double_any, 4, inputs=[ia], outputs=[out])
    assert out.numpy().tolist() == [8.0, 4.0, 2.0, 6.0]


def test_an_explicit_overload_takes_instances_for_their_types():
    values = TaggedArray(np.arange(6, dtype=np.float32).reshape(3, 2), tag="rows", dtype=float)
    out = TaggedArray(tag="out", shape=3, dtype=float)
    overload = wp.overload(first_of_rows, [values, out])
    assert overload is wp.overload(first_of_rows, [wp.array2d(dtype=float), wp.array(dtype=float)])
    wp.launch(first_of_rows, 3, inputs=[values], outputs=[out])
    assert out.numpy().tolist() == [0.0, 2.0, 4.0]


def test_gradients_flow_through_subclass_instances():
    a = TaggedArray([1.0, 2.0, 3.0], tag="x", dtype=float, requires_grad=True)
    b = TaggedArray(tag="y", shape=3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, 3, inputs=[a], outputs=[b])
    tape.backward(grads={b: wp.ones(3, dtype=float)})
    assert a.grad.numpy().tolist() == [2.0, 4.0, 6.0]
