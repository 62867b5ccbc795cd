"""`weft.DeterministicMode` (Warp's "deterministic" option): kernels whose float atomics
make results depend on thread order run in thread order, so results repeat bit for bit."""

import numpy as np

import weft as wp


def test_deterministic_mode_repeats_float_atomics_bit_for_bit():
    rng = np.random.default_rng(3)
    x = wp.array(rng.standard_normal(200_000).astype(np.float32) * 1e3)
    saved = wp.config.deterministic, wp.config.parallel_threshold
    try:
        wp.config.deterministic = wp.DeterministicMode.RUN_TO_RUN
        wp.config.parallel_threshold = 1  # (the launch would otherwise be split across threads)

        @wp.kernel(module="unique")  # (a module takes the config's mode when it is made)
        def scatter_sum(x: wp.array(dtype=float), total: wp.array(dtype=float)):
            wp.atomic_add(total, 0, x[wp.tid()])

        results = set()
        for _ in range(3):
            total = wp.zeros(1)
            wp.launch(scatter_sum, x.size, inputs=[x, total])
            results.add(total.numpy()[0].tobytes())
        assert len(results) == 1
        # in thread order, as one thread adds them
        assert total.numpy()[0] == np.cumsum(x.numpy(), dtype=np.float32)[-1]
    finally:
        wp.config.deterministic, wp.config.parallel_threshold = saved


def test_config_mode_is_read_when_the_module_is_made():
    """As in Warp: a module keeps the deterministic mode of weft.config at its creation, so
    changing the config later neither changes its options nor its hash."""
    saved = wp.config.deterministic
    try:
        wp.config.deterministic = wp.DeterministicMode.RUN_TO_RUN

        @wp.kernel(module="unique")
        def made_deterministic(out: wp.array(dtype=float)):
            wp.atomic_add(out, 0, float(wp.tid()))

        before = made_deterministic.module.get_module_hash()
        wp.config.deterministic = wp.DeterministicMode.NOT_GUARANTEED
        assert made_deterministic.module.options["deterministic"] is wp.DeterministicMode.RUN_TO_RUN
        assert made_deterministic.module.get_module_hash() == before
        assert made_deterministic.deterministic

        @wp.kernel(module="unique")
        def made_later(out: wp.array(dtype=float)):
            wp.atomic_add(out, 0, float(wp.tid()))

        assert made_later.module.options["deterministic"] is wp.DeterministicMode.NOT_GUARANTEED
        assert not made_later.deterministic
    finally:
        wp.config.deterministic = saved
