"""A persistent pool of worker threads for CPU launches.

The compiled kernel is called through ctypes, which releases the GIL, so the threads run
in parallel. A launch of `n` threads is cut into one contiguous chunk per worker (fixed
boundaries, so results do not depend on timing); the calling thread runs the first chunk.
"""

from __future__ import annotations

import os
import queue
import threading


class ThreadPool:
    def __init__(self, size: int):
        self.size = size
        self._inboxes = [queue.SimpleQueue() for _ in range(size - 1)]
        self._done = queue.SimpleQueue()
        self._lock = threading.Lock()
        for inbox in self._inboxes:
            threading.Thread(target=self._work, args=(inbox,), daemon=True, name="weft-worker").start()

    def _work(self, inbox):
        while True:
            fn, args = inbox.get()
            try:
                fn(*args)
                self._done.put(None)
            except BaseException as e:  # noqa: BLE001 - handed back to the launching thread
                self._done.put(e)

    def run_kernel(self, ck, args_ptr: int, ctx_ptr: int, total: int, threads: int, args_stride: int = 0):
        """Run compiled kernel `ck` over [0, total) (the same interface as NativePool's)."""
        threads = max(1, min(threads, self.size, total))

        def args(begin, end):  # chunk k begins at total * k // threads
            k = next(k for k in range(threads) if total * k // threads == begin)
            return args_ptr + k * args_stride, begin, end, ctx_ptr
        self.run(ck.entry, total, args, threads)

    def run(self, fn, total: int, make_args, threads: int):
        """Call `fn(*make_args(begin, end))` over [0, total) in `threads` chunks."""
        threads = max(1, min(threads, self.size, total))
        bounds = [total * k // threads for k in range(threads + 1)]
        with self._lock:  # one parallel launch at a time; each uses every worker
            for k in range(1, threads):
                self._inboxes[k - 1].put((fn, make_args(bounds[k], bounds[k + 1])))
            error = None
            try:
                fn(*make_args(bounds[0], bounds[1]))
            except BaseException as e:  # noqa: BLE001
                error = e
            for _ in range(1, threads):
                result = self._done.get()
                error = error or result
        if error is not None:
            raise error


_pool = None


_CPUS = os.cpu_count() or 1


def thread_count() -> int:
    from .. import config
    return max(1, config.num_threads or _CPUS)


def get_pool():
    """The process's pool with at least `thread_count()` threads: native where supported
    (Linux x86-64), else Python threads."""
    global _pool
    n = thread_count()
    if _pool is None or _pool.size < n:
        from .native_pool import NativePool, supported
        _pool = NativePool(n) if supported() else ThreadPool(n)
    return _pool
