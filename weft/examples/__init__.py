"""Runnable examples: `python -m weft.examples.NAME`."""
