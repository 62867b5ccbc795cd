"""Structs and gradients.

Arrays held in struct parameters: the adjoint kernel takes an adjoint struct (the `.grad`
of the struct's arrays, nested structs alike), built by the Tape and by
`launch(..., adjoint=True)` where the caller passes None; fields without gradient take
none; overwrites of struct-held arrays are snapshotted like plain arrays.

Arrays of structs: their gradient is an array of the same struct type whose float fields
(vector components included) hold the gradients; other fields stay zero."""

import numpy as np

import weft as wp
from autodiff.helpers import F64


@wp.struct
class Pair:
    x: wp.array(dtype=F64)
    y: wp.array(dtype=F64)
    scale: F64


@wp.struct
class Outer:
    pair: Pair
    offset: wp.array(dtype=F64)


@wp.kernel
def product(p: Pair, z: wp.array(dtype=F64)):
    i = wp.tid()
    z[i] = p.x[i] * p.y[i] * p.scale


@wp.kernel
def nested_sum(o: Outer, loss: wp.array(dtype=F64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, o.pair.x[i] * o.pair.x[i] + o.offset[i])


X = np.array([0.5, -1.0, 2.0])
Y = np.array([3.0, 0.25, -1.5])


def _pair(requires_grad=(True, True)):
    p = Pair()
    p.x = wp.array(X, dtype=F64, requires_grad=requires_grad[0])
    p.y = wp.array(Y, dtype=F64, requires_grad=requires_grad[1])
    p.scale = 2.0
    return p


def test_tape_gradients_of_struct_arrays():
    p = _pair()
    z = wp.zeros(3, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(product, 3, inputs=[p], outputs=[z])
    tape.backward(grads={z: np.ones(3)})
    np.testing.assert_allclose(p.x.grad.numpy(), 2.0 * Y)
    np.testing.assert_allclose(p.y.grad.numpy(), 2.0 * X)
    adjoint = tape.gradients[p]  # the adjoint struct: the fields' gradients
    assert adjoint.x is p.x.grad and adjoint.y is p.y.grad
    # the fields are keys too, as in Warp (example_diffray reads tape.gradients[mesh.rot])
    assert tape.gradients[p.x] is p.x.grad and tape.gradients[p.y] is p.y.grad
    tape.backward(grads={z: np.ones(3)})  # accumulates
    np.testing.assert_allclose(p.x.grad.numpy(), 4.0 * Y)
    tape.reset()
    assert not p.x.grad.numpy().any() and not p.y.grad.numpy().any()


def test_nested_struct_and_zero():
    o = Outer()
    o.pair = _pair()
    o.offset = wp.array(np.ones(3), dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(nested_sum, 3, inputs=[o, loss])
    tape.backward(loss=loss)
    assert tape.gradients[o.pair.x] is o.pair.x.grad and tape.gradients[o.offset] is o.offset.grad
    np.testing.assert_allclose(o.pair.x.grad.numpy(), 2 * X)
    np.testing.assert_allclose(o.offset.grad.numpy(), 1.0)
    assert not o.pair.y.grad.numpy().any()  # not read
    tape.zero()
    assert not o.pair.x.grad.numpy().any() and not o.offset.grad.numpy().any()


def test_a_field_without_gradient_takes_none():
    p = _pair(requires_grad=(True, False))  # y has no .grad: its adjoint field is null
    z = wp.zeros(3, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(product, 3, inputs=[p], outputs=[z])
    tape.backward(grads={z: np.ones(3)})
    np.testing.assert_allclose(p.x.grad.numpy(), 2.0 * Y)
    assert p.y.grad is None


def test_adjoint_launch_with_none_uses_the_fields_gradients():
    p = _pair()
    z = wp.zeros(3, dtype=F64)
    wp.launch(product, 3, inputs=[p], outputs=[z])
    adj_z = wp.array(np.ones(3), dtype=F64)
    wp.launch(product, 3, inputs=[p], outputs=[z], adj_inputs=[None], adj_outputs=[adj_z], adjoint=True)
    np.testing.assert_allclose(p.x.grad.numpy(), 2.0 * Y)
    np.testing.assert_allclose(p.y.grad.numpy(), 2.0 * X)
    np.testing.assert_array_equal(adj_z.numpy(), 1.0)  # a write-only output's adjoint is read, not consumed
    # an explicit adjoint struct takes precedence
    explicit = Pair()
    explicit.x = wp.zeros(3, dtype=F64)
    explicit.y = wp.zeros(3, dtype=F64)
    wp.launch(product, 3, inputs=[p], outputs=[z], adj_inputs=[explicit], adj_outputs=[adj_z], adjoint=True)
    np.testing.assert_allclose(explicit.x.numpy(), 2.0 * Y)
    np.testing.assert_allclose(p.x.grad.numpy(), 2.0 * Y)  # unchanged


@wp.kernel
def scale_in_place(p: Pair):
    i = wp.tid()
    p.x[i] = p.x[i] * 3.0


def test_struct_array_overwritten_later_is_snapshotted():
    p = _pair()
    z = wp.zeros(3, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(product, 3, inputs=[p], outputs=[z])  # reads x
        wp.launch(scale_in_place, 3, inputs=[p])  # then overwrites it
    np.testing.assert_allclose(p.x.numpy(), 3 * X)
    tape.backward(grads={z: np.ones(3)})
    np.testing.assert_allclose(p.y.grad.numpy(), 2.0 * X)  # the x that product read, not 3x


@wp.struct
class Particle:
    pos: F64
    vel: wp.vec3d
    count: int


@wp.kernel
def particle_energy(p: wp.array(dtype=Particle), e: wp.array(dtype=F64)):
    i = wp.tid()
    e[i] = p[i].pos * p[i].vel[1] + F64(p[i].count)


@wp.kernel
def make_particles(x: wp.array(dtype=F64), p: wp.array(dtype=Particle)):
    i = wp.tid()
    s = Particle()
    s.pos = x[i] * 2.0
    s.vel = wp.vec3d(0.0, x[i], 1.0)
    s.count = 3
    p[i] = s


def test_gradients_of_arrays_of_structs():
    p = wp.array([Particle(pos=2.0, vel=wp.vec3d(1.0, 3.0, 0.5), count=4)] * 2, dtype=Particle, requires_grad=True)
    e = wp.zeros(2, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(particle_energy, 2, inputs=[p, e])
    tape.backward(grads={e: np.array([1.0, 2.0])})
    grad = p.grad.numpy()
    np.testing.assert_allclose(grad["pos"], [3.0, 6.0])
    np.testing.assert_allclose(grad["vel"], [[0.0, 2.0, 0.0], [0.0, 4.0, 0.0]])
    assert not grad["count"].any()


def test_arrays_of_structs_written_then_read():
    x = wp.array(X, dtype=F64, requires_grad=True)
    p = wp.zeros(3, dtype=Particle, requires_grad=True)
    e = wp.zeros(3, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(make_particles, 3, inputs=[x, p])
        wp.launch(particle_energy, 3, inputs=[p, e])
    np.testing.assert_allclose(e.numpy(), 2 * X * X + 3)
    tape.backward(grads={e: np.ones(3)})
    np.testing.assert_allclose(x.grad.numpy(), 4 * X)
    assert not p.grad.numpy()["pos"].any()  # consumed by make_particles' store


@wp.struct
class State:
    x: wp.array(dtype=F64)
    v: wp.array(dtype=F64)


@wp.kernel
def step_through_a_copy(state_in: State, state_out: State, dt: F64):
    i = wp.tid()
    out = State(state_out.x, state_out.v)  # a struct built in the kernel from the parameter's arrays
    out.v[i] = state_in.v[i] * 2.0
    out.x[i] = state_in.x[i] + out.v[i] * dt


def test_arrays_of_a_struct_built_in_the_kernel_are_the_parameters_arrays():
    s_in, s_out = State(), State()
    s_in.x, s_in.v = wp.array(X, dtype=F64, requires_grad=True), wp.array(Y, dtype=F64, requires_grad=True)
    s_out.x, s_out.v = wp.zeros(3, dtype=F64, requires_grad=True), wp.zeros(3, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(step_through_a_copy, 3, inputs=[s_in, s_out, 0.5])
    np.testing.assert_allclose(s_out.x.numpy(), X + Y)
    tape.backward(grads={s_out.x: np.ones(3)})
    np.testing.assert_allclose(s_in.x.grad.numpy(), 1.0)
    np.testing.assert_allclose(s_in.v.grad.numpy(), 1.0)  # 2 * dt
