"""Reading a function's source by its indentation (weft/lang/source.py): the same lines
`inspect.getsourcelines` gives, or None where indentation cannot tell (then inspect
decides), for the shapes of function a kernel file holds."""

import inspect
import textwrap

import pytest

from weft.lang import source

SHAPES = {
    "plain": "def f(x):\n    y = x + 1\n    return y\n",
    "decorated": "def deco(**kw):\n    return lambda g: g\n\n@deco(\n    size=None\n)\ndef f(x):\n    return x\n",
    "trailing comments": "def f(x):\n    return x\n    # end\n\n# after\nz = 1\n",
    "nested": "def outer():\n    def f(x):\n        return x\n\n    return f\nf = outer()\n",
    "one line": "def f(x): return x\nz = 2\n",
    "signature back at the def's column": "def f(\n    x,\n):\n    return x\n",
    "string at column 0": 'def f(x):\n    s = """\nleft\n"""\n    return x\n',
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_blocks_match_inspect(tmp_path, shape):
    path = tmp_path / f"shape_{shape.replace(' ', '_').replace(chr(39), '')}.py"
    path.write_text(SHAPES[shape])
    ns = {}
    exec(compile(SHAPES[shape], str(path), "exec"), ns)
    f = ns["f"]
    fast = source._block_by_indentation(f)
    if fast is not None:
        assert fast == tuple(inspect.getsourcelines(f))
    # and what the compiler reads is inspect's answer either way
    lines, first = source.source_lines(f)
    assert (lines, first) == tuple(inspect.getsourcelines(f))
    assert textwrap.dedent("".join(lines)).lstrip().startswith(("def f", "@"))


def test_blocks_that_indentation_cannot_tell_go_to_inspect(tmp_path):
    for shape in ("signature back at the def's column", "string at column 0"):
        path = tmp_path / f"fallback_{len(shape)}.py"
        path.write_text(SHAPES[shape])
        ns = {}
        exec(compile(SHAPES[shape], str(path), "exec"), ns)
        assert source._block_by_indentation(ns["f"]) is None
