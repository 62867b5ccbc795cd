"""weft.render: importable (Warp programs import warp.render even when they draw nothing);
making a renderer says that weft has none."""

import pytest


def test_render_module_imports_and_renderers_refuse_clearly():
    import weft
    import weft.render

    assert weft.render.UsdRenderer.__name__ == "UsdRenderer"
    with pytest.raises(NotImplementedError, match="UsdRenderer: weft has no renderer.*stage-path None"):
        weft.render.UsdRenderer("out.usd")
    with pytest.raises(NotImplementedError, match="OpenGLRenderer: weft has no renderer"):
        weft.render.OpenGLRenderer(vsync=False)
