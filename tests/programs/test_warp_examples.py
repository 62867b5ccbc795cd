"""Warp's own examples (from the installed warp-lang wheel) run unchanged on weft, headless on
the CPU for a few frames (warp_examples.py; skipped without warp-lang)."""

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location("warp_examples", pathlib.Path(__file__).with_name("warp_examples.py"))
warp_examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(warp_examples)

QUICK = [(name, args) for name, args, quick in warp_examples.EXAMPLES if quick]


@pytest.mark.skipif(warp_examples.examples_dir() is None, reason="warp-lang is not installed")
@pytest.mark.parametrize("name,args", QUICK, ids=[name for name, _ in QUICK])
def test_warp_example_runs_on_weft(name, args):
    if warp_examples.missing_module(name):
        pytest.skip(f"needs {warp_examples.missing_module(name)}")
    ok, tail, _ = warp_examples.run_example(name, args, timeout=300)
    assert ok, f"{name} failed on weft:\n{tail}"
