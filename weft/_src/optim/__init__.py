"""Warp's `warp._src.optim`: weft's optimizers and linear solvers under Warp's internal paths."""
