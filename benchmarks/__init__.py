"""Side-by-side benchmarks of weft against Warp, numpy, torch, JAX and Taichi.

Run ``python -m benchmarks.run --help`` from the repository root.
"""
