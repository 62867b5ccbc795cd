"""The examples run and check themselves."""

from weft.examples import wave


def test_wave_example_runs_and_agrees_with_numpy(tmp_path, capsys):
    wave.main(["--steps", "20", "--out", str(tmp_path / "wave.png")])
    out = capsys.readouterr().out
    assert "max difference" in out
