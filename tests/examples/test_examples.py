"""The examples run and check themselves."""

import sys

import numpy as np
import pytest

from weft.examples import wave


def test_wave_example_runs_and_agrees_with_numpy(tmp_path, capsys):
    wave.main(["--steps", "20", "--out", str(tmp_path / "wave.png")])
    out = capsys.readouterr().out
    assert "max difference" in out


def test_fireworks_example_recovers_launch_velocities(tmp_path, capsys):
    from weft.examples import fireworks

    r = fireworks.main(["--shells", "6", "--steps", "40", "--iters", "40", "--out", str(tmp_path / "fw.png")])
    out = capsys.readouterr().out
    assert "40/40" in out and "relative error" in out
    assert r["fd_error"] < 1e-2
    assert r["final_loss"] < r["first_loss"] * 1e-6
    assert abs(r["v_opt"] - r["v_true"]).max() < 1e-2


def test_torch_training_example_learns_to_aim_through_the_simulation(tmp_path, capsys):
    pytest.importorskip("torch")
    from weft.examples import torch_training

    out_png = tmp_path / "tt.png"
    r = torch_training.main(["--iters", "400", "--batch", "64", "--steps", "20", "--held-out", "64",
                             "--out", str(out_png)])
    out = capsys.readouterr().out
    assert "400/400" in out and "[FAIL]" not in out
    assert f"wrote {out_png}" in out or "matplotlib is not installed" in out
    assert r["op_gradcheck"] and r["gradient_error"] < 1e-3 and r["forward_error"] < 1e-2
    assert r["final_loss"] < r["first_loss"] * 1e-3
    assert r["miss_95"] < torch_training.HIT_RADIUS
    assert r["miss_95"] < 0.05 * float(np.median(r["drag_free_miss"]))  # the drag-free aim misses by metres


def test_torch_training_example_without_torch_says_what_to_install(monkeypatch):
    from weft.examples import torch_training

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    with pytest.raises(SystemExit, match=r"pip install torch==2\.13\.0"):
        torch_training.main(["--no-plot"])


def test_sph_example_finds_every_neighbour_pair(capsys):
    from weft.examples import sph

    r = sph.main(["--particles", "1000", "--steps", "20"])
    assert "brute force" in capsys.readouterr().out
    assert r["density_error"] < 1e-5 and r["acceleration_error"] < 1e-4
    assert r["inside_box"] and r["mean_height"][1] < r["mean_height"][0]  # the block falls
    if r["warp"] is not None:  # (None: warp-lang is not installed) the same kernels under Warp
        density, acceleration, positions = r["warp"]
        assert density < 1e-5 and acceleration < 1e-4 and positions < 1e-4


def test_tile_mlp_example_learns_the_image_with_exact_gradients(tmp_path, capsys):
    from weft.examples import tile_mlp

    r = tile_mlp.main(["--iters", "120", "--out", str(tmp_path / "mlp.png")])
    out = capsys.readouterr().out
    assert "120/120 Adam steps" in out
    assert r["gradient_error"] < 1e-6
    assert r["final_loss"] < r["first_loss"] * 0.05


def test_nvdb_example_samples_the_sphere_sdf_and_keeps_particles_out(capsys):
    from weft.examples import nvdb

    r = nvdb.main(["--particles", "500", "--steps", "120"])
    assert "analytic sphere" in capsys.readouterr().out
    assert r["sdf_error"] < 5e-3 and r["normal_error"] < 5e-2
    assert r["min_distance"] > 0.1 and r["mean_height"][1] < r["mean_height"][0]
    if r["warp"] is not None:  # (None: warp-lang is not installed) the same kernels on the same volume
        distance, gradient, positions = r["warp"]
        assert distance < 1e-5 and gradient < 1e-4 and positions < 1e-4


def test_mesh_closest_point_example_matches_brute_force_warp_and_the_closed_form_gradient(capsys):
    from weft.examples import mesh_closest_point

    r = mesh_closest_point.main(["--queries", "500"])
    assert "brute force" in capsys.readouterr().out
    assert r["brute_error"] < 1e-5 and r["gradient_error"] < 1e-5
    assert r["warp_error"] is None or r["warp_error"] < 1e-5  # (None: warp-lang is not installed)


def test_example_directories_as_warp_names_them():
    import os

    import weft.examples
    assert os.path.isfile(os.path.join(weft.examples.get_source_directory(), "wave.py"))
    assert weft.examples.get_asset_directory() == os.path.join(weft.examples.get_source_directory(), "assets")
