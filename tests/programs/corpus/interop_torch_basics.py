"""PyTorch interop: wp.from_torch / wp.to_torch share memory both ways, dtype and device
mapping, vector dtypes from (N, 3) tensors, a torch view modified by a kernel."""

import numpy as np
import torch
import warp as wp

REQUIRES = ["torch"]

wp.init()


@wp.kernel
def advect(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    x[i] = x[i] + v[i] * dt


@wp.kernel
def fill_index(a: wp.array2d(dtype=wp.int64)):
    i, j = wp.tid()
    a[i, j] = wp.int64(i * 10 + j)


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def run():
    torch.manual_seed(0)
    x_t = torch.rand(16, 3, dtype=torch.float32)
    v_t = torch.linspace(-1.0, 1.0, 48, dtype=torch.float32).reshape(16, 3)
    x0 = x_t.clone()

    device = wp.device_from_torch(x_t.device)
    x = wp.from_torch(x_t, dtype=wp.vec3)
    v = wp.from_torch(v_t, dtype=wp.vec3)
    for _ in range(3):
        wp.launch(advect, dim=16, inputs=[x, v, 0.1], device=device)
    # the kernel wrote into the torch tensor's memory
    moved = (x_t - x0).numpy()

    grid = wp.zeros((3, 4), dtype=wp.int64)
    wp.launch(fill_index, dim=grid.shape, inputs=[grid])
    grid_t = wp.to_torch(grid)
    grid_t[0, 0] = -5  # torch write is visible to Warp
    grid_after = grid.numpy()

    y_t = torch.ones(8)
    y = wp.from_torch(y_t)
    wp.launch(saxpy, dim=8, inputs=[2.0, wp.from_torch(torch.arange(8, dtype=torch.float32)), y])

    dtypes = [str(wp.dtype_to_torch(t)) for t in (wp.float32, wp.float64, wp.int32, wp.int64, wp.uint8, wp.bool)]
    back = [wp.dtype_from_torch(t).__name__ for t in (torch.float16, torch.int16, torch.int8, torch.float64)]

    hashes = wp.array(np.array([1, 2**31 + 5, 2**32 - 1], dtype=np.uint32))
    hashes_t = wp.to_torch(hashes)  # keeps the unsigned type
    bits = wp.from_torch(torch.tensor([-1, 7], dtype=torch.int32), dtype=wp.uint32)  # same bits, unsigned

    return {
        "moved": moved,
        "hashes_t_dtype": str(hashes_t.dtype),
        "hashes_t": hashes_t.numpy(),
        "bits": bits.numpy(),
        "x_shape": np.array(x.shape),
        "x_dtype_is_vec3": x.dtype == wp.vec3,
        "grid_after": grid_after,
        "grid_t_dtype": str(grid_t.dtype),
        "grid_t_shape": np.array(grid_t.shape),
        "y": y_t.numpy(),
        "device_name": str(wp.device_to_torch(device)),
        "torch_dtypes": np.array(dtypes),
        "warp_dtypes": np.array(back),
    }
