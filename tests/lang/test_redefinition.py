"""A func given a new body (a module reloaded, a notebook cell run again): kernels compiled
before use the new body at their next launch, as Warp rebuilds a module whose dependencies
changed."""

import importlib
import linecache
import sys
import textwrap

import numpy as np

import weft as wp


def _write(path, text):
    path.write_text(textwrap.dedent(text))
    importlib.invalidate_caches()


def test_reloaded_module_reaches_kernels_of_other_modules(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _write(tmp_path / "weft_reload_base.py", """
        import weft as wp

        @wp.func
        def magic():
            return 1.0
    """)
    _write(tmp_path / "weft_reload_user.py", """
        import weft as wp
        import weft_reload_base as base

        @wp.func
        def twice():
            return 2.0 * base.magic()

        @wp.kernel
        def kern(out: wp.array(dtype=float)):
            out[0] = base.magic() + 10.0 * twice()
    """)
    try:
        base = importlib.import_module("weft_reload_base")
        user = importlib.import_module("weft_reload_user")
        out = wp.zeros(1, dtype=float)
        wp.launch(user.kern, 1, inputs=[out])
        assert out.numpy()[0] == 21.0  # 1 + 10 * 2
        _write(tmp_path / "weft_reload_base.py", """
            import weft as wp

            @wp.func
            def magic():
                return 3.0
        """)
        importlib.reload(base)
        wp.launch(user.kern, 1, inputs=[out])
        assert out.numpy()[0] == 63.0  # 3 + 10 * 6: the kernel and the func that inlined magic
    finally:
        sys.modules.pop("weft_reload_base", None)
        sys.modules.pop("weft_reload_user", None)


def _run_cell(source, name, namespace):
    """exec `source` as a notebook does: its text in linecache under the cell's name."""
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    exec(compile(source, name, "exec"), namespace)  # noqa: S102


def test_func_redefined_in_the_same_namespace():
    """A notebook runs a cell again: the new @func replaces the old one's body under the same
    name, and an existing kernel that calls it sees the change; kernels that do not call it
    keep their compiled code."""
    namespace = {"wp": wp, "__name__": "weft_notebook_cell"}
    cell = "@wp.func\ndef offset(x: float) -> float:\n    return x + {}\n"
    _run_cell(cell.format(1.0), "<cell-1>", namespace)
    _run_cell("@wp.kernel\ndef shift(a: wp.array(dtype=float)):\n"
              "    i = wp.tid()\n    a[i] = offset(a[i])\n\n"
              "@wp.kernel\ndef unrelated(a: wp.array(dtype=float)):\n"
              "    i = wp.tid()\n    a[i] = a[i] * 2.0\n", "<cell-2>", namespace)
    a = wp.zeros(3, dtype=float)
    wp.launch(namespace["shift"], 3, inputs=[a])
    wp.launch(namespace["unrelated"], 3, inputs=[a])
    compiled_before = dict(namespace["unrelated"]._compiled)
    _run_cell(cell.format(5.0), "<cell-1 again>", namespace)
    wp.launch(namespace["shift"], 3, inputs=[a])
    wp.launch(namespace["unrelated"], 3, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), [14.0, 14.0, 14.0])  # ((0 + 1) * 2 + 5) * 2
    assert namespace["unrelated"]._compiled == compiled_before
