"""Running an example's kernels under NVIDIA Warp, to compare its numbers with weft's.

`run_in_warp(kernels, driver, **data)` writes the kernels' source (the same Python that
weft compiled) into a module for `import warp as wp`, and runs `driver` in a separate
Python process on Warp's CPU device, with `wp`, `np`, the kernels' module `k`, the JSON
`data` and a dict `out` in scope; it returns `out`, or None when warp-lang is not
installed or fails (neither is an error: Warp is not a weft dependency).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

RUNNER = '''
import importlib.util, json, os, sys, tempfile
import numpy as np
import warp as wp
wp.config.quiet = True
data = json.load(sys.stdin)
path = os.path.join(tempfile.mkdtemp(), "weft_example_kernels.py")
with open(path, "w") as f:
    f.write(data.pop("source"))
spec = importlib.util.spec_from_file_location("weft_example_kernels", path)
k = importlib.util.module_from_spec(spec)
spec.loader.exec_module(k)
wp.set_device("cpu")
out = {}
exec(data.pop("driver"), {"wp": wp, "np": np, "k": k, "data": data, "out": out})
print(json.dumps(out))
'''


def run_in_warp(kernels, driver: str, timeout: float = 600, **data) -> dict | None:
    """`out` of `driver` run under Warp with `kernels` (weft kernels or funcs) as module `k`;
    numpy arrays in `data` travel as nested lists."""
    source = "import warp as wp\n\n\n" + "\n\n".join(inspect.getsource(f.__wrapped__) for f in kernels)
    payload = {key: v.tolist() if hasattr(v, "tolist") else v for key, v in data.items()}
    payload.update(source=source, driver=driver)
    try:
        done = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(payload), capture_output=True,
                              text=True, timeout=timeout, check=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, FileNotFoundError):
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])
