"""Warp 1.19 keeps its internals under `warp._src`; programs and tests import them from
there (`warp._src.types.int_types`). These modules re-export weft's own objects."""

from . import types  # noqa: F401
