"""The Warp programs of tests/programs/corpus/ compute on weft what they compute on Warp.

Each program runs unchanged on weft (`warp` routed to weft, in one subprocess for all of
them) and its results are compared with those Warp 1.19 computed on the CPU for the same
file (corpus/expected/NAME.npz, recorded with `run_corpus.py --target warp`), so the check
needs no Warp installed. A program may set `TOLERANCE = {"result": (rtol, atol)}` for
results that are sums in a different order (atomics, threads); integers, booleans and
strings are compared exactly. A program that sets `REQUIRES = ["torch"]` (optional packages
it imports; "c++" for a C++ compiler) is skipped where one of them is missing.
"""

import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from .run_corpus import available

HERE = pathlib.Path(__file__).parent
CORPUS = HERE / "corpus"
EXPECTED = CORPUS / "expected"
NAMES = sorted(p.stem for p in CORPUS.glob("*.py") if not p.name.startswith("_"))
DEFAULT_TOLERANCE = (1e-5, 1e-6)


@pytest.fixture(scope="module")
def weft_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run([sys.executable, str(HERE / "run_corpus.py"), "--target", "weft", "--out", str(out)],
                   capture_output=True, text=True, timeout=1800)
    return out


def _literal(name: str, variable: str, default):
    """A module-level literal of the program, read without importing it (it imports warp)."""
    for node in ast.parse((CORPUS / f"{name}.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == variable for t in node.targets):
            return ast.literal_eval(node.value)
    return default


def _tolerances(name: str) -> dict:
    return _literal(name, "TOLERANCE", {})


def test_every_program_has_expected_results():
    missing = [n for n in NAMES if not (EXPECTED / f"{n}.npz").exists()]
    assert not missing, f"record them with run_corpus.py --target warp: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_program_matches_warp(name, weft_results):
    missing = [m for m in _literal(name, "REQUIRES", []) if not available(m)]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}")
    error = weft_results / f"{name}.error.txt"
    assert not error.exists(), error.read_text()
    expected_path = EXPECTED / f"{name}.npz"
    if not expected_path.exists():
        pytest.fail(f"no expected results for {name}")
    got, expected = np.load(weft_results / f"{name}.npz"), np.load(expected_path)
    assert sorted(got.files) == sorted(expected.files)
    tolerances = _tolerances(name)
    for key in expected.files:
        a, b = got[key], expected[key]
        assert a.shape == b.shape, f"{key}: shape {a.shape} vs Warp's {b.shape}"
        assert a.dtype == b.dtype, f"{key}: dtype {a.dtype} vs Warp's {b.dtype}"
        if b.dtype.kind in "fc":
            rtol, atol = tolerances.get(key, DEFAULT_TOLERANCE)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{name}: {key}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{name}: {key}")
