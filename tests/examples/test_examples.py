"""The examples run and check themselves."""

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
