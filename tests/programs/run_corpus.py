"""Run the Warp programs of tests/programs/corpus/ on weft or on Warp and save what they compute.

    python tests/programs/run_corpus.py --target weft --out DIR [NAME ...]
    python tests/programs/run_corpus.py --target warp --out tests/programs/corpus/expected [NAME ...]

Each corpus file is a Warp program as a user writes it (`import warp as wp`, kernels at
module level) with a function `run() -> dict` of named results (arrays, numbers, strings).
With `--target weft` an import hook makes `warp` and `warp.X` mean `weft` and `weft.X`, so
the file runs unchanged. Results go to DIR/NAME.npz; a program that raises writes
DIR/NAME.error.txt (its traceback) instead. `--target warp` with warp-lang installed
records the expected results that test_corpus.py compares weft's against.

A program that needs an optional package (PyTorch, JAX) names it in a module-level literal
`REQUIRES = ["torch"]` (or "c++" for a C++ compiler); where one is missing the program is skipped and
writes nothing (test_corpus.py skips it too).
"""

from __future__ import annotations

import argparse
import ast
import importlib.abc
import importlib.util
import os
import pathlib
import shutil
import sys
import traceback

import numpy as np

CORPUS = pathlib.Path(__file__).with_name("corpus")


class WarpIsWeft(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import warp` / `import warp.X` give weft / weft.X (the same module objects)."""

    def find_spec(self, name, path, target=None):
        if name == "warp" or name.startswith("warp."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("weft" + spec.name[4:])

    def exec_module(self, module):
        pass


def program_names() -> list[str]:
    return sorted(p.stem for p in CORPUS.glob("*.py") if not p.name.startswith("_"))


def available(requirement: str) -> bool:
    """Whether a `REQUIRES` entry is here: a Python package that imports, or "c++", a C++
    compiler (weft compiles `func_native` snippets with the system's)."""
    if requirement == "c++":
        return any(shutil.which(c) for c in [*os.environ.get("CXX", "").split()[:1], "c++", "g++", "clang++"])
    return importlib.util.find_spec(requirement) is not None


def missing_requirements(name: str) -> list[str]:
    """The entries of the program's `REQUIRES` literal that are not available here."""
    for node in ast.parse((CORPUS / f"{name}.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "REQUIRES" for t in node.targets):
            return [m for m in ast.literal_eval(node.value) if not available(m)]
    return []


def run_program(name: str) -> dict[str, np.ndarray]:
    """Import corpus/NAME.py as a fresh module and return its `run()` results as arrays."""
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", CORPUS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    results = module.run()
    if not isinstance(results, dict) or not results:
        raise TypeError(f"{name}.run() must return a non-empty dict of named results")
    return {key: np.asarray(value) for key, value in results.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", choices=("weft", "warp"), required=True)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    if args.target == "weft":
        sys.meta_path.insert(0, WarpIsWeft())
    import warp

    warp.config.quiet = True
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.names or program_names():
        (args.out / f"{name}.error.txt").unlink(missing_ok=True)
        if missing := missing_requirements(name):
            print(f"skip   {name} (needs {', '.join(missing)})", flush=True)
            continue
        try:
            results = run_program(name)
        except Exception:
            failed += 1
            (args.out / f"{name}.error.txt").write_text(traceback.format_exc())
            print(f"FAILED {name}", flush=True)
            continue
        np.savez(args.out / f"{name}.npz", **results)
        print(f"ran    {name}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
