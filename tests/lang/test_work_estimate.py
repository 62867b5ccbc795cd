"""The work estimate that decides whether a launch is spread over cores: loops count by
their trip count (constant bounds) or as many iterations (bounds known at run time)."""

import weft as wp
from weft.lang.compiled import DYNAMIC_TRIPS, work_per_thread


@wp.kernel
def all_pairs(p: wp.array(dtype=wp.vec3), a: wp.array(dtype=wp.vec3), n: int):
    i = wp.tid()
    acc = wp.vec3()
    for j in range(n):
        d = p[j] - p[i]
        acc += d / (wp.length(d) + 0.01)
    a[i] = acc


@wp.kernel
def nested(x: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    for j in range(100):
        for k in range(x.shape[0]):
            s += x[k] * float(j)
    x[i] = s


def test_dynamic_loops_count_as_many_iterations():
    body = work_per_thread(all_pairs.ir().body)
    assert body >= DYNAMIC_TRIPS * 5
    # 4096 bodies: above the threshold, so the launch uses every core
    assert 4096 * body >= wp.config.parallel_threshold


def test_nested_loops_multiply():
    assert work_per_thread(nested.ir().body) >= 100 * DYNAMIC_TRIPS
