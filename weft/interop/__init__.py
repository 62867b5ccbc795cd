"""Zero-copy interop with PyTorch (`torch`), DLPack producers (`dlpack`) and JAX (`jax`)."""
