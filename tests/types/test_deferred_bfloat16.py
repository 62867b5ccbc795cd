"""bfloat16's numpy dtype comes from ml_dtypes, which `import weft` leaves until bfloat16
is first used (types/scalars.py, _DeferredScalar): every way in reaches it."""

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import weft as wp
    assert "ml_dtypes" not in sys.modules, "imported by import weft"
    how = sys.argv[1]
    if how == "array":  # an array of ml_dtypes' type, made by the program
        import ml_dtypes
        a = wp.array(np.arange(4, dtype=np.float32).astype(ml_dtypes.bfloat16))
        assert a.dtype is wp.bfloat16 and a.numpy().astype(np.float32).tolist() == [0, 1, 2, 3]
    elif how == "zeros":
        assert wp.zeros(3, dtype=wp.bfloat16).numpy().dtype.name == "bfloat16"
    elif how == "value":
        assert float(wp.bfloat16(1.5)) == 1.5 and isinstance(wp.bfloat16(2.0), wp.bfloat16)
    elif how == "tables":
        # (Warp's answer: the uint16 storage of the bits; arrays' numpy() still give bfloat16)
        assert wp.types.warp_type_to_np_dtype[wp.bfloat16].__name__ == "uint16"
        assert wp.types.dtype_to_numpy(wp.bfloat16).__name__ == "uint16"
    elif how == "from numpy":
        import ml_dtypes
        assert wp.types.dtype_from_numpy(ml_dtypes.bfloat16) is wp.bfloat16
        assert wp.types.np_dtype_to_warp_type[np.dtype(ml_dtypes.bfloat16)] is wp.bfloat16
    print("ok")
""")


def test_bfloat16_is_reached_every_way_after_a_lazy_import(tmp_path):
    script = tmp_path / "bf16.py"
    script.write_text(PROGRAM)
    for how in ("array", "zeros", "value", "tables", "from numpy"):
        done = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "ok", (how, done.stderr)
