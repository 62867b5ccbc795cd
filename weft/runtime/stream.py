"""Streams and events, as a CPU-only Warp presents them.

Streams and events belong to CUDA devices: as in Warp, creating one for the CPU, or asking
the CPU device for its stream (`get_stream("cpu")`, `set_stream`, `record_event` with the
CPU as default device), is a RuntimeError. A CPU launch, copy or fill is finished when the
call returns, so `synchronize_stream` of the CPU has nothing to wait for. The classes keep
the state a CUDA stream or event has (the current stream, when an event was recorded) for
devices that have streams.
"""

from __future__ import annotations

import time

from .device import get_device


def _cuda_device(device):
    """`device` as a Device, which must be a CUDA device: streams and events are CUDA's."""
    device = get_device(device)
    if not device.is_cuda:
        raise RuntimeError(f"Device {device} is not a CUDA device: streams and events need one")
    return device


class Event:
    """A point in a stream's work. `enable_timing=True` lets `get_event_elapsed_time`
    measure the time between two recorded events."""

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.owner = False  # (an instance that __init__ refused is still deletable)
        return instance

    def __init__(self, device=None, enable_timing: bool = False, interprocess: bool = False):
        self.device = _cuda_device(device)
        if enable_timing and interprocess:
            raise ValueError("The combination of 'enable_timing=True' and 'interprocess=True' is not allowed.")
        self.owner = True
        self.enable_timing = enable_timing
        self.interprocess = interprocess
        self.timestamp: float | None = None  # perf_counter seconds of the last record

    @property
    def is_complete(self) -> bool:
        return True

    def _record(self):
        self.timestamp = time.perf_counter()

    def __del__(self):
        """Nothing to release: weft holds no CUDA event (also safe where __init__ refused)."""

    def __repr__(self):
        return f"<weft Event on {self.device}>"


class Stream:
    """An ordered queue of work on a CUDA device (the CPU has none: its work runs as it is
    issued)."""

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.cuda_stream = None  # (an instance that __init__ refused is still deletable)
        instance.owner = False
        return instance

    def __init__(self, device=None, priority: int = 0, **kwargs):
        self._cached_event = None
        self.device = _cuda_device(device)
        if not isinstance(priority, int):
            raise TypeError("Stream priority must be an integer.")
        self.priority = max(-1, min(priority, 0))  # (two levels, as CUDA's)
        self.cuda_stream = kwargs.get("cuda_stream")
        self.owner = "cuda_stream" not in kwargs

    def __del__(self):
        """Nothing to release: weft holds no CUDA stream (also safe where __init__ refused)."""

    @property
    def is_blocking(self) -> bool:
        return True

    @property
    def is_complete(self) -> bool:
        return True

    @property
    def is_capturing(self) -> bool:
        return self.device.is_capturing

    @property
    def cached_event(self) -> Event:
        if self._cached_event is None:
            self._cached_event = Event(self.device)
        return self._cached_event

    def record_event(self, event: Event | None = None) -> Event:
        """Record `event` (a new one if None) at this point of the stream and return it."""
        if event is None:
            event = Event(self.device)
        elif event.device != self.device:
            raise RuntimeError(f"event from device {event.device} cannot be recorded on a stream "
                               f"of device {self.device}")
        event._record()
        return event

    def wait_event(self, event: Event) -> None:
        """Make later work of this stream wait for `event` (already complete on the CPU)."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event expects an Event, got {type(event).__name__}")

    def wait_stream(self, other_stream: Stream, event: Event | None = None) -> None:
        """Make later work of this stream wait for the work issued so far to `other_stream`."""
        self.wait_event(other_stream.record_event(event))

    def synchronize(self) -> None:
        """Wait for the stream's work (done already on the CPU)."""

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"<weft Stream on {self.device}>"


def get_stream(device=None) -> Stream:
    """The current stream of `device` (the default device's if None)."""
    return get_device(device).stream


def set_stream(stream: Stream, device=None, sync: bool = False) -> None:
    """Make `stream` the current stream of `device` (the default device if None), which must
    be the stream's device (a RuntimeError for the CPU, which has no streams)."""
    get_device(device).set_stream(stream, sync)


def wait_stream(other_stream: Stream, event: Event | None = None, external: bool = False) -> None:
    """Make the current stream of `other_stream`'s device wait for `other_stream` (`external`:
    Warp's flag for CUDA graph capture, no effect here)."""
    get_stream(other_stream.device).wait_stream(other_stream, event)


def synchronize_stream(stream_or_device=None) -> None:
    """Wait for a stream's work, or that of a device's current stream (a CPU device: its
    work is done when issued)."""
    if not isinstance(stream_or_device, Stream):
        device = get_device(stream_or_device)
        if not device.is_cuda:
            return
        stream_or_device = device.stream
    if stream_or_device.device.is_capturing:
        raise RuntimeError("Cannot synchronize stream while graph capture is active")


def record_event(event: Event | None = None, external: bool = False) -> Event:
    """Record `event` on the current stream of the default device (`external`: Warp's flag for
    CUDA graph capture, no effect here)."""
    return get_stream().record_event(event)


def wait_event(event: Event, external: bool = False) -> None:
    """Make the current stream of `event`'s device wait for it (`external`: as record_event)."""
    get_stream(event.device).wait_event(event)


def synchronize_event(event: Event) -> None:
    """Wait until `event` completes (it has, on the CPU)."""


def get_event_elapsed_time(start_event: Event, end_event: Event, synchronize: bool = True) -> float:
    """Milliseconds between two recorded events created with `enable_timing=True`."""
    for name, event in (("start_event", start_event), ("end_event", end_event)):
        if not event.enable_timing:
            raise RuntimeError(f"{name} was created without enable_timing=True")
        if event.timestamp is None:
            raise RuntimeError(f"{name} has not been recorded")
    return (end_event.timestamp - start_event.timestamp) * 1e3


class ScopedStream:
    """`with ScopedStream(stream):` makes `stream` (and its device) current inside the block;
    `None` changes nothing."""

    def __init__(self, stream: Stream | None, sync_enter: bool = True, sync_exit: bool = False):
        self.stream = stream
        self.sync_enter = sync_enter
        self.sync_exit = sync_exit
        self.device = None if stream is None else stream.device
        self._scoped_device = None
        self._saved_stream = None

    def __enter__(self):
        if self.stream is not None:
            from .device import ScopedDevice
            self._scoped_device = ScopedDevice(self.device)
            self._scoped_device.__enter__()
            self._saved_stream = self.device.stream
            self.device.set_stream(self.stream, self.sync_enter)
        return self.stream

    def __exit__(self, *exc_info):
        if self.stream is not None:
            self.device.set_stream(self._saved_stream, self.sync_exit)
            self._scoped_device.__exit__(*exc_info)
