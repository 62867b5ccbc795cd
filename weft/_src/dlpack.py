"""`warp._src.dlpack` as Warp programs and tests import from it: re-exports of
weft/interop/dlpack.py (`_from_dlpack` is Warp's name of the function that views a
capsule or DLPack object)."""

from ..interop.dlpack import from_dlpack, to_dlpack

_from_dlpack = from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
