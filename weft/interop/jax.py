"""JAX arrays as weft arrays and back, through DLPack (no copy where JAX allows it), and
JAX devices as weft devices.

JAX arrays are immutable to JAX, but as in Warp an array made by `from_jax` is a writable
view of the JAX array's buffer (kernels, `fill_`, `.numpy()` write into it): writing is only
safe into buffers nothing else in JAX uses. `to_jax` shares the array's memory (weft aligns
allocations as XLA's CPU backend needs), so later writes to the array show in the JAX array.
Kernels and functions as JAX operations: `jax_kernel.py`, `jax_callable.py`.
"""

from __future__ import annotations

from ..runtime.array import array
from ..types import Matrix, Scalar, Vector, scalar_from_numpy
from .dlpack import from_dlpack


def _jax():
    try:
        import jax
        import jax.dlpack  # noqa: F401 - the submodule
    except ImportError:
        raise ImportError("weft's JAX interop needs JAX: pip install jax") from None
    return jax


def from_jax(x, dtype=None) -> array:
    """A weft array viewing JAX array `x`'s memory (see `from_dlpack` for `dtype`)."""
    return from_dlpack(x, dtype)


def to_jax(a: array):
    """A JAX array of weft array `a`'s contents (JAX views the memory when it can; strided
    arrays, which JAX does not take, are copied first)."""
    return _jax().dlpack.from_dlpack(a if a.is_contiguous else a.contiguous())


def dtype_from_jax(jax_dtype) -> Scalar:
    """The weft scalar type of a JAX (numpy) dtype."""
    import numpy as np
    t = scalar_from_numpy(np.dtype(jax_dtype))
    if t is None:
        raise TypeError(f"JAX dtype {jax_dtype} has no weft equivalent")
    return t


def dtype_to_jax(dtype):
    """The JAX dtype holding weft `dtype` (a vector's or matrix's component type)."""
    jnp = _jax().numpy
    scalar = dtype.dtype if isinstance(dtype, (Vector, Matrix)) else dtype
    if not isinstance(scalar, Scalar):
        raise TypeError(f"weft dtype {dtype!r} has no JAX equivalent")
    return jnp.dtype(scalar.np_dtype)


def _weft():
    """The weft package: its public device functions are looked up there at call time, so
    that they can be replaced (as tests do) and the lookups stay one-way."""
    import weft
    return weft


def get_jax_device():
    """The JAX device that JAX places new arrays on: `jax.default_device` if set, else the
    first local device."""
    jax = _jax()
    device = jax.config.jax_default_device
    if device is None:
        return jax.local_devices()[0]
    if isinstance(device, str):  # a platform name, e.g. "cpu"
        return jax.local_devices(backend=device)[0]
    return device


def device_from_jax(jax_device):
    """The weft device of a JAX device: the CPU for JAX's CPU devices; a GPU maps to the
    CUDA device of the same process-local ordinal (weft has no CUDA backend yet, so that
    is a clear error). A device of another process (jax.distributed) is refused."""
    jax = _jax()
    platform = getattr(jax_device, "platform", None)
    if platform == "cpu":
        return _weft().get_device("cpu")
    if platform in ("gpu", "cuda", "rocm"):
        ordinal = getattr(jax_device, "local_hardware_id", None)
        process = getattr(jax_device, "process_index", 0)
        if process != jax.process_index() or ordinal is None:
            raise RuntimeError(f"JAX device '{jax_device}' belongs to process {process}, not to this process "
                               f"({jax.process_index()}): it has no weft device here")
        get_cuda_device = getattr(_weft(), "get_cuda_device", None)
        if get_cuda_device is None:
            return _weft().get_device(f"cuda:{ordinal}")  # a clear error: no CUDA backend
        return get_cuda_device(ordinal)
    raise RuntimeError(f"JAX device '{jax_device}' (platform {platform!r}) has no weft equivalent")


def device_to_jax(device=None):
    """The JAX device of weft `device` (None: the default), among this process's devices."""
    jax = _jax()
    device = _weft().get_device(device)
    if getattr(device, "is_cuda", False):
        try:
            gpus = jax.local_devices(backend="cuda")
        except RuntimeError:
            gpus = []
        for gpu in gpus:
            if gpu.local_hardware_id == device.ordinal:
                return gpu
        raise RuntimeError(f"weft device {device} is not available to JAX in this process")
    try:
        return jax.local_devices(backend="cpu")[0]
    except (RuntimeError, IndexError):
        raise RuntimeError(f"weft device {device}: JAX's CPU backend is not available") from None


def check_device_support():
    """Refuse to run a JAX op's callback where weft cannot run kernels (a clear error
    instead of a failure inside the launch)."""
    available = getattr(_weft(), "is_cpu_available", None)
    if available is not None and not available():
        raise RuntimeError("this weft installation does not include CPU support: it cannot run the kernels "
                           "of a JAX operation on JAX's CPU device")
