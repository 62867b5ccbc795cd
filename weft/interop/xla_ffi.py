"""One XLA FFI target for every weft JAX op: XLA calls it with its own buffers, and weft
runs the op's kernel (or function) on them in place, with no copy.

The target is a C function pointer made by ctypes (XLA's typed FFI, API version 0.1; the
structs below follow `xla/ffi/api/c_api.h` as shipped in `jax.ffi.include_dir()`). Each
staged call carries an integer attribute `weft_call` that names the Python object to run
(a `HostCall`, kept in `_CALLS` for as long as the process lives: a traced op's executable
may run any number of times). Everything the handler does is inside a try block: an
exception becomes an XLA error (JAX raises it to the caller) and never unwinds into C.
"""

from __future__ import annotations

import ctypes
import itertools
import threading

import ml_dtypes
import numpy as np

TARGET = "weft_host_call"
ATTRIBUTE = "weft_call"

_EXTENSION_METADATA = 1
_STAGE_EXECUTE = 3
_ATTR_SCALAR = 3
_ERROR_UNKNOWN = 2


class _ExtensionBase(ctypes.Structure):
    pass


_ExtensionBase._fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                           ("next", ctypes.POINTER(_ExtensionBase))]


class _ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class _Buffer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("data", ctypes.c_void_p), ("rank", ctypes.c_int64), ("dims", ctypes.POINTER(ctypes.c_int64))]


class _Values(ctypes.Structure):  # XLA_FFI_Args and XLA_FFI_Rets have this layout
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p), ("size", ctypes.c_int64),
                ("types", ctypes.POINTER(ctypes.c_int)), ("values", ctypes.POINTER(ctypes.c_void_p))]


class _ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _Attrs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p), ("size", ctypes.c_int64),
                ("types", ctypes.POINTER(ctypes.c_int)), ("names", ctypes.POINTER(ctypes.POINTER(_ByteSpan))),
                ("attrs", ctypes.POINTER(ctypes.c_void_p))]


class _Scalar(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("value", ctypes.c_void_p)]


class _CallFrame(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.POINTER(_ExtensionBase)),
                ("api", ctypes.c_void_p), ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int),
                ("args", _Values), ("rets", _Values), ("attrs", _Attrs), ("future", ctypes.c_void_p)]


class _Metadata(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("api_version", _ApiVersion), ("traits", ctypes.c_uint32),
                ("state_type_id", ctypes.c_int64)]


class _MetadataExtension(ctypes.Structure):
    _fields_ = [("extension_base", _ExtensionBase), ("metadata", ctypes.POINTER(_Metadata))]


class _ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


_ErrorCreate = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_ErrorCreateArgs))


class _Api(ctypes.Structure):  # the leading fields of XLA_FFI_Api: only Error_Create is used
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("api_version", _ApiVersion), ("internal_api", ctypes.c_void_p), ("error_create", _ErrorCreate)]


_Handler = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_CallFrame))

_CALLS: dict = {}
_ids = itertools.count(1)
_lock = threading.Lock()
_registered = None  # the ctypes handler (kept alive) once registered with JAX


class _Interface:
    """An `__array_interface__` holder for numpy to view XLA's memory."""

    def __init__(self, interface):
        self.__array_interface__ = interface


def _array(buffer_ptr, dtype) -> np.ndarray:
    buffer = ctypes.cast(buffer_ptr, ctypes.POINTER(_Buffer)).contents
    shape = tuple(buffer.dims[k] for k in range(buffer.rank))
    if not buffer.data or 0 in shape:
        return np.zeros(shape, dtype)  # empty: nothing to read or write
    # (a dtype numpy knows only as raw bytes, ml_dtypes' bfloat16: read as unsigned ints, then viewed)
    typestr = dtype.str if dtype.kind != "V" else f"<u{dtype.itemsize}"
    view = np.asarray(_Interface({"shape": shape, "typestr": typestr, "data": (buffer.data, False),
                                  "version": 3}))
    return view if view.dtype == dtype else view.view(dtype)


def _call_id(attrs: _Attrs) -> int | None:
    for k in range(attrs.size):
        name = attrs.names[k].contents
        if attrs.types[k] == _ATTR_SCALAR and ctypes.string_at(name.ptr, name.len) == ATTRIBUTE.encode():
            scalar = ctypes.cast(attrs.attrs[k], ctypes.POINTER(_Scalar)).contents
            return ctypes.cast(scalar.value, ctypes.POINTER(ctypes.c_int64)).contents.value
    return None


def _error(api_ptr, message: str):
    api = ctypes.cast(api_ptr, ctypes.POINTER(_Api)).contents
    args = _ErrorCreateArgs(ctypes.sizeof(_ErrorCreateArgs), None, message.encode("utf-8", "replace"),
                            _ERROR_UNKNOWN)
    return api.error_create(ctypes.byref(args))


def _answer_metadata(frame) -> bool:
    """Answer XLA's question for the handler's API version, if that is what the call is."""
    extension = frame.extension_start
    if extension and extension.contents.type == _EXTENSION_METADATA:
        metadata = ctypes.cast(extension, ctypes.POINTER(_MetadataExtension)).contents.metadata.contents
        metadata.api_version.major_version, metadata.api_version.minor_version = 0, 1
        metadata.traits = 0
        return True
    return False


def _handle(frame_ptr):
    frame = frame_ptr.contents
    try:
        if _answer_metadata(frame) or frame.stage != _STAGE_EXECUTE:
            return None
        call = _CALLS.get(_call_id(frame.attrs))
        if call is None:
            raise RuntimeError("weft: this JAX op's call is unknown to this process")
        inputs = [_array(frame.args.values[k], call.input_dtypes[k]) for k in range(frame.args.size)]
        outputs = [_array(frame.rets.values[k], call.output_dtypes[k]) for k in range(frame.rets.size)]
        call.execute(inputs, outputs)
        return None
    except BaseException as e:  # noqa: BLE001 - everything goes back to XLA as an error
        return _error(frame.api, f"{type(e).__name__}: {e}")


def available(jax) -> bool:
    """Whether JAX has the FFI (`jax.ffi.ffi_call`, JAX 0.4.36 and later)."""
    return hasattr(jax, "ffi") and hasattr(jax.ffi, "ffi_call") and hasattr(jax.ffi, "register_ffi_target")


def _register(jax):
    global _registered
    with _lock:
        if _registered is None:
            handler = _Handler(_handle)
            jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(handler), platform="cpu")
            _registered = handler


def stage(jax, call, arrays, out_types, vmap_method, aliases, has_side_effect):
    """Stage `call` (a HostCall with `input_dtypes`, `output_dtypes` and `execute`) as an
    `ffi_call` on `arrays`; `aliases` maps input positions to the outputs they become."""
    _register(jax)
    call_id = next(_ids)
    _CALLS[call_id] = call
    op = jax.ffi.ffi_call(TARGET, tuple(out_types), vmap_method=vmap_method, input_output_aliases=aliases,
                          has_side_effect=has_side_effect)
    return op(*arrays, **{ATTRIBUTE: np.int64(call_id)})


# Raw callbacks (Warp's register_ffi_callback) ---------------------------------------------------
_DTYPES = {1: np.bool_, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.uint8, 7: np.uint16,
           8: np.uint32, 9: np.uint64, 10: np.float16, 11: np.float32, 12: np.float64, 16: ml_dtypes.bfloat16}
_ATTR_ARRAY, _ATTR_STRING = 1, 4
_callbacks: dict = {}  # name -> ctypes handler, kept alive


class _Array(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("size", ctypes.c_size_t), ("data", ctypes.c_void_p)]


class CallContext:
    """What a raw callback learns of its call besides its buffers: the CUDA stream (none on
    the CPU) and the execution stage."""

    def __init__(self, stage):
        self.stream = None
        self.stage = stage


def _buffer_array(buffer_ptr) -> np.ndarray:
    buffer = ctypes.cast(buffer_ptr, ctypes.POINTER(_Buffer)).contents
    dtype = _DTYPES.get(buffer.dtype)
    if dtype is None:
        raise TypeError(f"XLA buffer of data type {buffer.dtype} has no numpy equivalent")
    return _array(buffer_ptr, np.dtype(dtype))


def _attributes(attrs: _Attrs) -> dict:
    out = {}
    for k in range(attrs.size):
        span = attrs.names[k].contents
        name = ctypes.string_at(span.ptr, span.len).decode()
        kind = attrs.types[k]
        if kind == _ATTR_SCALAR:
            scalar = ctypes.cast(attrs.attrs[k], ctypes.POINTER(_Scalar)).contents
            dtype = np.dtype(_DTYPES[scalar.dtype])
            out[name] = np.frombuffer(ctypes.string_at(scalar.value, dtype.itemsize), dtype)[0].item()
        elif kind == _ATTR_STRING:
            value = ctypes.cast(attrs.attrs[k], ctypes.POINTER(_ByteSpan)).contents
            out[name] = ctypes.string_at(value.ptr, value.len).decode()
        elif kind == _ATTR_ARRAY:
            array = ctypes.cast(attrs.attrs[k], ctypes.POINTER(_Array)).contents
            dtype = np.dtype(_DTYPES[array.dtype])
            out[name] = np.frombuffer(ctypes.string_at(array.data, dtype.itemsize * array.size), dtype).copy()
        else:
            raise TypeError(f"attribute '{name}': dictionaries are not supported")
    return out


def register_callback(jax, name: str, func):
    """Register `func(inputs, outputs, attrs, ctx)` as the XLA FFI target `name` on the
    CPU: `inputs` and `outputs` are numpy views of XLA's buffers (launch kernels on them,
    fill the outputs), `attrs` a dict of the call's attributes, `ctx` a `CallContext`."""

    def handle(frame_ptr):
        frame = frame_ptr.contents
        try:
            if _answer_metadata(frame) or frame.stage != _STAGE_EXECUTE:
                return None
            inputs = [_buffer_array(frame.args.values[k]) for k in range(frame.args.size)]
            outputs = [_buffer_array(frame.rets.values[k]) for k in range(frame.rets.size)]
            func(inputs, outputs, _attributes(frame.attrs), CallContext(frame.stage))
            return None
        except BaseException as e:  # noqa: BLE001 - everything goes back to XLA as an error
            return _error(frame.api, f"{type(e).__name__}: {e}")

    handler = _Handler(handle)
    with _lock:
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler), platform="cpu")
        _callbacks[name] = handler
