"""Run the benchmark suite and print one table per workload.

Usage (from the repository root)::

    python -m benchmarks.run [saxpy elementwise nbody compile launch mass_spring torch_op
                              cloth tile_gemm tile_reduce local_vector
                              image_channels]
                             [--peers weft,warp,numpy] [--quick] [--json out.json]

``python benchmarks/run.py ...`` works too.
"""

import argparse
import importlib
import json
import os
import subprocess
import sys
import time

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import common  # noqa: E402

WORKLOADS = {
    "saxpy": "benchmarks.saxpy",
    "elementwise": "benchmarks.elementwise",
    "nbody": "benchmarks.nbody",
    "compile": "benchmarks.compile_time",
    "launch": "benchmarks.launch",
    "mass_spring": "benchmarks.mass_spring",
    "torch_op": "benchmarks.torch_op",
    "cloth": "benchmarks.cloth",
    "tile_gemm": "benchmarks.tile_gemm",
    "tile_reduce": "benchmarks.tile_reduce",
    "local_vector": "benchmarks.local_vector",
    "image_channels": "benchmarks.image_channels",
}


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help=f"workloads to run (default: all): {', '.join(WORKLOADS)}")
    ap.add_argument("--peers", default=",".join(common.PEERS),
                    help="comma-separated peers to run (default: %(default)s)")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes and short timing budget (smoke test)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of timing per case (default 1.0, 0.2 with --quick)")
    ap.add_argument("--json", metavar="FILE", help="also write results as JSON")
    ap.add_argument("--strict", action="store_true",
                    help="exit with status 1 if any result check fails")
    ap.add_argument("--busy-core", action="store_true",
                    help="keep one core busy with another process (a Python busy loop) for the whole "
                         "run: how each peer copes with a machine it shares")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
    peers = tuple(p.strip() for p in args.peers.split(",") if p.strip())
    bad = [p for p in peers if p not in common.PEERS]
    if bad:
        ap.error(f"unknown peer(s) {bad}; choose from {list(common.PEERS)}")
    args.peers = peers
    return args


def main(argv=None) -> int:
    """Entry point; returns a process exit code."""
    args = parse_args(argv)
    common.SETTINGS.quick = args.quick
    common.SETTINGS.peers = args.peers
    common.SETTINGS.budget_s = args.budget if args.budget is not None else (
        0.2 if args.quick else 1.0)

    load = os.getloadavg()[0]
    versions = common.peer_versions()
    print("versions: " + ", ".join(f"{k} {v if v is not None else 'n/a'}"
                                   for k, v in versions.items()))
    if load > 0.5:
        print(f"warning: 1-minute load average is {load:.2f}; other processes will skew timings")
    t_start = time.perf_counter()
    results = {"versions": versions, "quick": args.quick, "loadavg_start": load,
               "busy_core": args.busy_core, "workloads": {}}
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy_core else None
    try:
        failed = _run_workloads(args, results)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    results["loadavg_end"] = os.getloadavg()[0]
    print(f"\ntotal {time.perf_counter() - t_start:.1f} s "
          f"(load average {load:.2f} at start, {results['loadavg_end']:.2f} at end"
          f"{'; one core kept busy' if args.busy_core else ''})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 1 if failed else 0


def _run_workloads(args, results: dict) -> bool:
    """Run and print the chosen workloads; True if a check failed under --strict."""
    failed = False
    for name in args.names or list(WORKLOADS):
        t0 = time.perf_counter()
        try:
            report = importlib.import_module(WORKLOADS[name]).run()
        except Exception as exc:  # keep the other workloads running
            print(f"\n== {name}: failed: {common.one_line(exc, 200)}")
            failed = True
            continue
        report.print()
        failed |= args.strict and any(r.check.startswith("FAIL") for r in report.rows)
        print(f"({name} took {time.perf_counter() - t0:.1f} s)")
        results["workloads"][name] = {"title": report.title, "metric": report.metric_name,
                                      "rows": common.row_dicts(report.rows)}
    return failed


if __name__ == "__main__":
    sys.exit(main())
