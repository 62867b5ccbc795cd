"""`weft.render`, so that Warp programs that `import warp.render` load (Warp's examples all
do, and draw only when given a stage path or a window).

weft has no renderer yet: `UsdRenderer` and `OpenGLRenderer` exist so that the import
succeeds and a program running headless never touches them; making one raises
`NotImplementedError` saying so (run the program headless, e.g. Warp's examples with
`--stage-path None` / `--headless`, or draw the arrays' `.numpy()` with another tool).
"""

from __future__ import annotations

__all__ = ["OpenGLRenderer", "UsdRenderer"]


class _NoRenderer:
    _what = ""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"weft.render.{type(self).__name__}: weft has no renderer ({self._what}); run the program without "
            "rendering (Warp's examples: --stage-path None, --headless) or draw the arrays' .numpy() with "
            "another tool")


class UsdRenderer(_NoRenderer):
    """Warp's USD exporter (frames written to a .usd stage); not in weft."""

    _what = "Warp's writes the scene to a USD stage through usd-core"


class OpenGLRenderer(_NoRenderer):
    """Warp's interactive OpenGL viewer; not in weft."""

    _what = "Warp's draws the scene in an OpenGL window through pyglet"
