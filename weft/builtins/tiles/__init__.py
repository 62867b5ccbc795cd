"""Tile builtins (Warp's tile programming model; issue 11). See core.py for the IR they
are made of and codegen/tile_ops.py for how tiles run on the CPU."""

from . import (  # noqa: F401 - registers the builtins
    construct,
    elements,
    elementwise,
    fft,
    indexed,
    linalg,
    memory,
    queries,
    random_tiles,
    reduce,
    scan,
    shape,
    solve,
    sort,
    stack,
)
