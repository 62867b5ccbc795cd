"""Devices: the CPU is the only one; CUDA names give a clear error everywhere."""

import pytest

import weft as wp
from weft.runtime.device import Device, ScopedDevice


def test_default_device_is_the_cpu():
    d = wp.get_device()
    assert isinstance(d, Device) and d is wp.get_device("cpu") is wp.get_device(d)
    assert d.is_cpu and not d.is_cuda and d.alias == "cpu"
    assert str(d) == "cpu" and repr(d) == "'cpu'"  # (as Warp's)
    assert d == "cpu" and d == Device("cpu") and d != "cuda" and d != 0
    assert hash(d) == hash(Device("cpu"))
    assert wp.get_preferred_device() == "cpu"


def test_cpu_name_is_the_processor_or_cpu(monkeypatch):
    import platform
    monkeypatch.setattr(platform, "processor", lambda: "")
    assert Device("cpu").name == "CPU"  # (Warp's name where platform.processor() says nothing)
    monkeypatch.setattr(platform, "processor", lambda: "x86_64")
    assert Device("cpu").name == "x86_64"


def test_cuda_queries():
    assert wp.is_cuda_available() is False
    assert wp.get_cuda_device_count() == 0
    wp.synchronize()
    wp.synchronize_device()
    wp.synchronize_device("cpu")


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_names_are_clear_errors(name):
    for call in (lambda: wp.get_device(name), lambda: wp.set_device(name), lambda: wp.zeros(3, device=name),
                 lambda: wp.array([1.0], device=name), lambda: wp.synchronize_device(name),
                 lambda: wp.zeros(3).to(name), lambda: wp.full(2, 1.0, device=name)):
        with pytest.raises(ValueError) as e:
            call()
        assert repr(name) in str(e.value) and "CUDA" in str(e.value) and "'cpu'" in str(e.value)
        assert isinstance(e.value, RuntimeError)  # what Warp raises without CUDA: programs catch it


@pytest.mark.parametrize("name", ["gpu", "tpu", "", "CPU", 0])
def test_unknown_devices(name):
    with pytest.raises(ValueError, match="unknown device"):
        wp.get_device(name)


def test_set_device(monkeypatch):
    import weft.runtime.device as device_module
    monkeypatch.setattr(device_module, "_default", device_module._default)
    wp.set_device("cpu")
    assert wp.get_device() == "cpu"
    with pytest.raises(ValueError):
        wp.set_device("cuda")
    assert wp.get_device() == "cpu"  # a failed set leaves the default alone


def test_arrays_live_on_the_cpu():
    for a in (wp.zeros(2), wp.array([1, 2], device="cpu"), wp.ones(2, device=wp.get_device()),
              wp.zeros_like(wp.zeros(2), device="cpu"), wp.clone(wp.zeros(2)), wp.zeros(4)[::2]):
        assert a.device == "cpu" and a.device.is_cpu


def test_scoped_device():
    with ScopedDevice("cpu") as d:
        assert d == "cpu" and wp.get_device() is d
        assert wp.zeros(1).device == "cpu"
    assert wp.get_device() == "cpu"
    with pytest.raises(ValueError, match="CUDA"):
        ScopedDevice("cuda:0")


def test_scoped_device_is_exported():
    with wp.ScopedDevice("cpu"):
        assert wp.get_device() == "cpu"


def test_cuda_profiler_controls_do_nothing_on_the_cpu():
    out = wp.zeros(4)
    with wp.ScopedCudaProfiler() as profiler:  # Warp: no effect unless the device is CUDA
        wp.copy(out, wp.ones(4))
    assert profiler.device == "cpu" and out.numpy().tolist() == [1.0] * 4
    assert wp.cuda_profiler_start("cpu") is None and wp.cuda_profiler_stop() is None
    with pytest.raises(ValueError, match="CUDA"):
        wp.ScopedCudaProfiler("cuda:0")
