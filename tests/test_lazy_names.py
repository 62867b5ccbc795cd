"""weft/__init__.py leaves the builtins (and geometry, the JAX interop) to be imported when
one of their names is first read: every name arrives, on any thread."""

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import sys, threading
    import weft as wp
    assert "weft.builtins" not in sys.modules and "weft.geometry" not in sys.modules
    names = ["sin", "dot", "atomic_add", "norm_l2", "static", "MeshQuery", "Mesh", "Volume", "tile_load"]
    errors, barrier = [], threading.Barrier(4)

    def read(offset):
        barrier.wait()
        for name in names[offset:] + names[:offset]:
            try:
                getattr(wp, name)
            except AttributeError as e:
                errors.append(repr(e))

    threads = [threading.Thread(target=read, args=(k,)) for k in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors, errors
    from weft import jax_kernel, HashGrid  # noqa: F401
    assert "sin" in dir(wp) and "Mesh" in wp.__all__ and wp.geometry.__name__ == "weft.geometry"
    print("ok")
""")


def test_lazy_names_arrive_on_every_thread(tmp_path):
    script = tmp_path / "lazy_names.py"
    script.write_text(PROGRAM)
    for _ in range(3):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
