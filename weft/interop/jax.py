"""JAX arrays as weft arrays and back, through DLPack (no copy where JAX allows it).

JAX arrays are immutable: an array made by `from_jax` must only be read by kernels.
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
