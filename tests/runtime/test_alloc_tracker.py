"""The allocation tracker: ScopedMemoryTracker, print_memory_report, config.track_memory."""

import gc
import io
import re
import threading

import numpy as np
import pytest

import weft as wp
from weft.runtime import alloc_tracker


@pytest.fixture(autouse=True)
def _tracking_off():
    assert not alloc_tracker.enabled
    yield
    wp.config.track_memory = False
    assert not alloc_tracker.enabled


def _live_tags():
    return sorted(r.tag for r in alloc_tracker._live.values())


def test_nothing_is_recorded_without_a_tracker():
    alloc_tracker.reset()
    a = wp.zeros(100)
    assert alloc_tracker.total_alloc_count() == 0 and alloc_tracker.live_count() == 0
    with pytest.raises(RuntimeError, match="not active"):
        wp.print_memory_report()
    del a


def test_sizes_live_and_peak_bytes_follow_the_arrays():
    with wp.ScopedMemoryTracker("sizes", print=False):
        alloc_tracker.reset()
        a = wp.zeros(1000, dtype=wp.float32)
        b = wp.zeros((3, 4), dtype=wp.vec3d)
        c = wp.array(np.arange(10, dtype=np.int64))
        assert alloc_tracker.total_alloc_count() == 3
        assert alloc_tracker.total_alloc_bytes() == 4000 + 12 * 24 + 80
        assert alloc_tracker.current_bytes() == alloc_tracker.peak_bytes() == 4000 + 288 + 80
        view = a[10:20]  # a view allocates nothing, and keeps a's memory alive
        del a
        gc.collect()
        assert alloc_tracker.live_count() == 3
        del view
        gc.collect()
        assert alloc_tracker.live_count() == 2 and alloc_tracker.current_bytes() == 288 + 80
        assert alloc_tracker.peak_bytes() == 4368
        strided = wp.zeros(5, dtype=wp.float32, strides=(8,))  # a gapped layout: its span in bytes
        assert alloc_tracker.current_bytes() == 288 + 80 + 36
    del b, c, strided
    gc.collect()
    assert alloc_tracker.live_count() == 0 and alloc_tracker.current_bytes() == 0


def test_tags_name_the_array_and_the_program_line():
    with wp.ScopedMemoryTracker("tags", print=False):
        alloc_tracker.reset()
        a = wp.zeros(32, dtype=wp.float32); line = _line()  # noqa: E702
        b = wp.zeros((2, 5), dtype=wp.mat22)
        tags = _live_tags()
    here = "test_tags_name_the_array_and_the_program_line()"
    assert f"array[float32, 32] : test_alloc_tracker.py:{line} : {here}" in tags
    assert any(t.startswith("array[mat22f, (2, 5)] : test_alloc_tracker.py:") for t in tags)
    del a, b


def _line():
    import sys
    return sys._getframe(1).f_lineno


def test_weft_objects_are_labelled_by_subsystem():
    # (a Mesh's and a Bvh's memory is labelled alike, "(native:mesh)", "(native:bvh)": Warp's
    # test_allocation_tracker checks those; building a BVH compiles for a minute)
    with wp.ScopedMemoryTracker("objects", print=False):
        alloc_tracker.reset()
        grid = wp.HashGrid(4, 4, 4)
        grid_tags = _live_tags()
        alloc_tracker.reset()
        points = wp.array(np.zeros((4, 3), np.float32), dtype=wp.vec3)
        grid.build(points, 1.0)
        build_tags = _live_tags()
    assert grid_tags and all(t.startswith("(native:hashgrid) : test_alloc_tracker.py:") for t in grid_tags)
    points_tag = [t for t in build_tags if t.startswith("array[vec3f, 4] : test_alloc_tracker.py:")]
    assert len(points_tag) == 1 and len(build_tags) > 1  # the program's points, and the build's memory
    assert all(t.startswith("(native:hashgrid) : test_alloc_tracker.py:") for t in build_tags if t not in points_tag)
    del grid


def test_scopes_nest_per_thread_and_report():
    def worker(name):
        with wp.ScopedMemoryTracker(name, print=False):
            keep.append(wp.zeros(8))
            with wp.ScopedMemoryTracker("inner", print=False):
                keep.append(wp.zeros(16))

    keep = []
    out = io.StringIO()
    with wp.ScopedMemoryTracker("root", report_func=out.write) as tracker:
        alloc_tracker.reset()
        threads = [threading.Thread(target=worker, args=(f"t{i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        keep.append(wp.zeros(4))
    text = out.getvalue()
    assert text.startswith("Allocation Tracking Report")
    for scope, count, size in (("t0", 1, "32 B"), ("t0/inner", 1, "64 B"), ("t1/inner", 1, "64 B"),
                               ("root", 1, "16 B")):
        assert re.search(rf"^    {re.escape(scope)}:\n      cpu: {count} allocs, {size}$", text, re.M), scope
    assert "Total allocations:\n    cpu              5 (208 B)" in text
    out.seek(0), out.truncate()
    tracker.report(file=io.StringIO(), sort="chronological", max_items=2)  # after the block: report_func gets it
    lines = [ln for ln in out.getvalue().splitlines() if ln.startswith("    ") and " : cpu : " in ln]
    assert len(lines) == 2 and "... and 3 more" in out.getvalue()
    assert "array[float32, 8]" in lines[0] or "array[float32, 8]" in lines[1]  # the threads' first arrays
    with pytest.raises(ValueError, match="sort"):
        tracker.report(sort="name")
    tracker.clear()
    assert alloc_tracker.live_count() == 0 and alloc_tracker.total_alloc_count() == 0


def test_report_printed_on_exit_and_inactive_tracker(capsys):
    with wp.ScopedMemoryTracker("printed"):
        a = wp.zeros(3)
    assert "Allocation Tracking Report" in capsys.readouterr().out
    with wp.ScopedMemoryTracker("off", active=False) as t:
        assert not alloc_tracker.enabled
        alloc_tracker.reset()
        b = wp.zeros(3)
    assert alloc_tracker.total_alloc_count() == 0 and capsys.readouterr().out == ""
    assert t.name == "off"
    del a, b


def test_config_track_memory_starts_and_stops_global_tracking():
    wp.config.track_memory = True
    assert alloc_tracker.enabled
    alloc_tracker.reset()
    a = wp.zeros(10, dtype=wp.int32)
    out = io.StringIO()
    wp.print_memory_report(file=out)
    assert "    global:\n      cpu: 1 allocs, 40 B" in out.getvalue()
    with wp.ScopedMemoryTracker("inside", print=False):  # a tracker inside leaves tracking on
        pass
    assert alloc_tracker.enabled
    wp.config.track_memory = False
    assert not alloc_tracker.enabled
    del a


def test_native_entry_points_of_warp_runtime():
    core = wp._src.context.runtime.core
    assert not core.wp_alloc_tracker_is_enabled()
    with wp.ScopedMemoryTracker("core", print=False):
        core.wp_alloc_tracker_reset()
        a = wp.zeros(25)
        assert core.wp_alloc_tracker_get_live_count() == 1 and core.wp_alloc_tracker_get_current_bytes() == 100
        text = wp._src.context.alloc_tracker_report_text(0, 10)
    assert "array[float32, 25]" in text and "Live allocations:" in text
    del a
