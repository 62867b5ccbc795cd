"""Warp-style programs (warp_programs.py) run on weft unchanged; where Warp is installed the
same file, with `warp` imported instead, must compute the same numbers."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import weft

SOURCE = pathlib.Path(__file__).with_name("warp_programs.py")


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def weft_programs():
    return _load(SOURCE, "warp_programs_on_weft")


@pytest.fixture(scope="module")
def warp_programs(tmp_path_factory):
    """The same file with `import warp as wp` (Warp reads kernel source from files)."""
    warp = pytest.importorskip("warp")
    warp.config.quiet = True
    path = tmp_path_factory.mktemp("warp_programs") / "warp_programs_on_warp.py"
    text = SOURCE.read_text()
    path.write_text(text.replace("import weft as wp\nimport weft.optim\n", "import warp as wp\nimport warp.optim\n"))
    return _load(path, "warp_programs_on_warp")


def _ballistic(programs, iterations=25):
    ex = programs.BallisticExample()
    for _ in range(iterations):
        ex.step()
    return ex


def test_ballistic_optimisation(weft_programs):
    ex = _ballistic(weft_programs)
    assert ex.losses[-1] < 0.05 * ex.losses[0], ex.losses
    assert set(ex.timings) == {"step"} and len(ex.timings["step"]) == 25
    assert all(t >= 0.0 for t in ex.timings["step"])


def test_ballistic_gradient_matches_finite_differences(weft_programs):
    ex = weft_programs.BallisticExample(num_balls=1, num_steps=20)
    tape = weft.Tape()
    with tape:
        ex.forward()
    tape.backward(ex.loss)
    grad = ex.velocity.grad.numpy().copy()[0]
    base = ex.velocity.numpy().copy()
    eps = 1e-2
    for c in range(3):
        values = []
        for sign in (1, -1):
            v = base.copy()
            v[0, c] += sign * eps
            ex.velocity.assign(v)
            values.append(ex.compute_loss())
        assert abs((values[0] - values[1]) / (2 * eps) - grad[c]) < 2e-3 * max(1.0, abs(grad[c]))
    ex.velocity.assign(base)


def test_heat_capture_replays_recorded_launches(weft_programs):
    ex = weft_programs.HeatExample()
    u0 = ex.u[0].numpy().copy()
    # Capturing records the launches without running them (as Warp 1.19 does on the CPU):
    # the field is still the initial one (an 8 x 8 hot square) until the graph is launched.
    assert u0.sum() == 64.0 + 0.5 * u0.shape[1]
    for _ in range(3):
        ex.step()
    want = weft_programs.heat_reference(u0, ex.k, 3 * ex.substeps)
    np.testing.assert_allclose(ex.u[0].numpy(), want, rtol=1e-5, atol=1e-6)


def test_spring_fit_struct_params(weft_programs):
    ex = weft_programs.SpringFitExample()
    energies = [ex.step() for _ in range(60)]
    # the hexagon's sides have length 1.5: the fitted rest length (rest * params.rest_length) goes there
    assert energies[-1] < 1e-4 * energies[0]
    np.testing.assert_allclose(ex.rest.numpy()[0], 1.5, rtol=1e-3)


def test_same_numbers_as_warp(weft_programs, warp_programs):
    a, b = _ballistic(weft_programs, 10), _ballistic(warp_programs, 10)
    np.testing.assert_allclose(a.losses, b.losses, rtol=1e-4)
    np.testing.assert_allclose(a.velocity.numpy(), b.velocity.numpy(), rtol=1e-4, atol=1e-5)
    ha, hb = weft_programs.HeatExample(), warp_programs.HeatExample()
    for _ in range(2):
        ha.step()
        hb.step()
    np.testing.assert_allclose(ha.u[0].numpy(), hb.u[0].numpy(), rtol=1e-6, atol=1e-7)
    sa, sb = weft_programs.SpringFitExample(), warp_programs.SpringFitExample()
    np.testing.assert_allclose([sa.step() for _ in range(10)], [sb.step() for _ in range(10)], rtol=1e-5)
