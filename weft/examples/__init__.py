"""Runnable examples: `python -m weft.examples.NAME`."""

import os


def get_source_directory() -> str:
    """The directory of weft's example programs (Warp's `warp.examples.get_source_directory`)."""
    return os.path.realpath(os.path.dirname(__file__))


def get_asset_directory() -> str:
    """Where example assets are looked up (Warp's `warp.examples.get_asset_directory`): the
    `assets` directory beside the examples. weft ships none of Warp's assets (USD meshes,
    NanoVDB volumes): a program that opens one there gets a FileNotFoundError naming it."""
    return os.path.join(get_source_directory(), "assets")
