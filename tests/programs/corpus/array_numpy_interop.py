"""Arrays and numpy: copy=False aliasing, np.asarray views of arrays, __array_interface__, wp.from_numpy,
arrays wrapping a pointer, wp.array of a Warp array, array gradients seen through views."""

import numpy as np
import warp as wp


@wp.kernel
def negate(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = -a[i]


@wp.kernel
def sq(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def run():
    r = {}
    host = np.arange(6, dtype=np.float32)
    shared = wp.array(host, dtype=wp.float32, copy=False)
    wp.launch(negate, dim=6, inputs=[shared])
    r["host_after_kernel"] = host.copy()
    host[0] = 42.0
    r["shared_sees_host"] = shared.numpy().copy()
    copied = wp.array(host)
    host[1] = 7.0
    r["copy_unchanged"] = copied.numpy().copy()
    view = np.asarray(copied)
    view[2] = -100.0
    r["asarray_writes"] = copied.numpy().copy()
    iface = wp.zeros((2, 3), dtype=wp.vec2).__array_interface__
    r["iface_shape"] = np.array(iface["shape"])
    r["iface_typestr"] = iface["typestr"]
    fn = wp.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    r["from_numpy_shape"] = np.array(fn.shape)
    r["from_numpy"] = fn.numpy().copy()
    r["from_numpy_shape_arg"] = wp.from_numpy(np.arange(6, dtype=np.float32), shape=(2, 3)).numpy().copy()
    owner = wp.array(np.arange(8, dtype=np.float32))
    wrapped = wp.array(ptr=owner.ptr, shape=(2, 4), dtype=wp.float32, device="cpu")
    wp.launch(negate, dim=4, inputs=[wrapped.flatten()[4:]])
    r["owner_after_ptr"] = owner.numpy().copy()
    r["wrapped"] = wrapped.numpy().copy()
    again = wp.array(owner, dtype=wp.float32)
    r["array_of_array"] = again.numpy().copy()
    x = wp.array(np.linspace(-1.0, 1.0, 6, dtype=np.float32), requires_grad=True)
    y = wp.zeros(6, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sq, dim=6, inputs=[x], outputs=[y])
    y.grad.fill_(1.0)
    y.grad[1:3].fill_(10.0)
    tape.backward()
    r["x_grad"] = x.grad.numpy().copy()
    r["x_grad_view"] = x[2:5].grad.numpy().copy()
    r["grad_T_shape"] = np.array(wp.zeros((2, 3), requires_grad=True).transpose().grad.shape)
    return r
