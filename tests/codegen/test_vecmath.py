"""Accuracy, special-value and vectorization tests for weft.codegen.vecmath.

Every function is JIT-compiled (MCJIT, host CPU, O3 with loop and SLP
vectorization) inside a loop ``y[i] = f(x[i])`` and compared against numpy:
float64 references for float32, long double references for float64.
"""

from __future__ import annotations

import ctypes
import math
import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

from weft.codegen import vecmath

BINARY = ("atan2", "pow")
TYPES = {np.float32: ir.FloatType(), np.float64: ir.DoubleType()}
CTYPES = {np.float32: ctypes.c_float, np.float64: ctypes.c_double}
# long double is 80-bit on x86-64 Linux; elsewhere it may be plain double,
# in which case float64 references are only good to ~1 ulp.
LD_EXTRA = 0.0 if np.finfo(np.longdouble).nmant >= 63 else 1.0


def _init_llvm() -> None:
    try:  # needed by old llvmlite; deprecated and raising in 0.50
        llvm.initialize()
    except RuntimeError:
        pass
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def _loop(mod: ir.Module, name: str, ty: ir.Type, nin: int, emit) -> None:
    """void name(T* in0, [T* in1,] T* out, i64 n): out[i] = emit(in[i]...)."""
    ptr = ir.PointerType()
    i64 = ir.IntType(64)
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr] * (nin + 1) + [i64]), name)
    *ins, out, n = fn.args
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block("body")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, i64(0)), body, done)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(i64(0), entry)
    args = [b.load(b.gep(p, [i], inbounds=True, source_etype=ty), typ=ty) for p in ins]
    b.store(emit(b, *args), b.gep(out, [i], inbounds=True, source_etype=ty))
    nxt = b.add(i, i64(1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, n), body, done)
    b.position_at_end(done)
    b.ret_void()


class _Compiled:
    """All vecmath kernels for one float type, JIT-compiled once."""

    def __init__(self, dtype):
        _init_llvm()
        ty = TYPES[dtype]
        mod = ir.Module(name=f"vecmath_{dtype.__name__}")
        mod.triple = llvm.get_process_triple()
        for name in vecmath.SUPPORTED:
            _loop(mod, f"f_{name}", ty, 1,
                  lambda b, x, name=name: vecmath.emit_unary(b, name, x))
        _loop(mod, "f_atan2", ty, 2, vecmath.emit_atan2)
        _loop(mod, "f_pow", ty, 2, vecmath.emit_pow)
        self.unoptimized = str(mod)
        llmod = llvm.parse_assembly(self.unoptimized)
        llmod.verify()
        target = llvm.Target.from_triple(llvm.get_process_triple())
        tm = target.create_target_machine(
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(), opt=3)
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(llmod, pb)
        self.llmod = llmod
        self.engine = llvm.create_mcjit_compiler(llmod, tm)
        self.engine.finalize_object()
        self.dtype = dtype
        cptr = ctypes.POINTER(CTYPES[dtype])
        self.fns = {}
        for name in vecmath.SUPPORTED + BINARY:
            nin = 2 if name in BINARY else 1
            proto = ctypes.CFUNCTYPE(None, *([cptr] * (nin + 1)), ctypes.c_int64)
            self.fns[name] = proto(self.engine.get_function_address(f"f_{name}"))

    def ir_of(self, name: str) -> str:
        return str(self.llmod.get_function(f"f_{name}"))

    def __call__(self, name: str, *arrays):
        cptr = ctypes.POINTER(CTYPES[self.dtype])
        ins = [np.ascontiguousarray(a, dtype=self.dtype) for a in arrays]
        out = np.empty(ins[0].shape, dtype=self.dtype)
        self.fns[name](*[a.ctypes.data_as(cptr) for a in ins],
                       out.ctypes.data_as(cptr), out.size)
        return out


@pytest.fixture(scope="module")
def jit():
    cache = {}

    def get(dtype):
        if dtype not in cache:
            cache[dtype] = _Compiled(dtype)
        return cache[dtype]
    return get


# ---------------------------------------------------------------------------
# references and error measure
# ---------------------------------------------------------------------------

def _erf_ref(x):
    return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(np.float64)


REF = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "cbrt": np.cbrt, "erf": _erf_ref, "atan2": np.arctan2, "pow": np.power,
}


def reference(name, dtype, *args):
    """High-precision reference: float64 for float32, long double for float64."""
    wide = np.float64 if dtype == np.float32 else np.longdouble
    with np.errstate(all="ignore"):
        return np.asarray(REF[name](*[np.asarray(a, dtype=wide) for a in args]), dtype=wide)


def ulp_error(res, ref, dtype):
    """|res - ref| in units of ulp(ref) of `dtype`; inf/NaN must match exactly
    (an infinity counts as the first value past the largest finite one)."""
    fi = np.finfo(dtype)
    p = fi.nmant + 1
    ref = np.asarray(ref, dtype=np.longdouble)
    res = np.asarray(res, dtype=np.longdouble)
    with np.errstate(all="ignore"):
        big = np.ldexp(np.longdouble(1), fi.maxexp)
        ref_t = ref.astype(dtype)
        # overflow: compare against the overflow threshold instead of inf
        ref_c = np.where(np.isinf(ref_t) & np.isfinite(ref), np.sign(ref) * big, ref)
        ref_c = np.where(np.isinf(ref_c), np.sign(ref_c) * big, ref_c)
        res_c = np.where(np.isinf(res), np.sign(res) * big, res)
        _, e = np.frexp(np.abs(ref_c))
        e = np.maximum(e, fi.minexp + 1)      # subnormals: ulp = 2^(minexp-p+1)
        ulp = np.ldexp(np.longdouble(1), e - p)
        err = np.abs(res_c - ref_c) / ulp
    nan_ref, nan_res = np.isnan(ref), np.isnan(res)
    err = np.where(nan_ref & nan_res, 0.0, err)
    err = np.where(nan_ref ^ nan_res, np.inf, err)
    return err.astype(np.float64)


def check(jit, name, dtype, bound, *args):
    args = [np.asarray(a, dtype=dtype) for a in args]
    res = jit(dtype)(name, *args)
    ref = reference(name, dtype, *args)
    err = ulp_error(res, ref, dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (
        f"{name}[{np.dtype(dtype).name}] max err {err[worst]:.3g} ulp at "
        f"{tuple(a[worst] for a in args)}: got {res[worst]!r}, want {ref[worst]!r}")
    return float(err.max())


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------

RNG_SEED = 1234
N = 60000
# sin/cos/tan reduction is accurate up to here (see vecmath docstring)
TRIG_RANGE = {np.float32: 2.0 ** 48, np.float64: 1e15}
# pi/2 to long double precision (double pi/2 plus its rounding error)
PIO2_LD = np.longdouble(np.pi / 2) + np.longdouble(6.123233995736766e-17)


def _logu(rng, lo, hi, n, signed=False):
    v = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    if signed:
        v *= rng.choice([-1.0, 1.0], n)
    return v


def inputs(name, dtype):
    """Random and edge-case arguments for a unary function."""
    rng = np.random.default_rng(RNG_SEED)
    f32 = dtype == np.float32
    fi = np.finfo(dtype)
    tinyv = [0.0, float(fi.smallest_subnormal), float(fi.tiny), 1e-30]
    tinyv += [-v for v in tinyv]
    u = rng.uniform
    if name in ("sin", "cos", "tan"):
        big = TRIG_RANGE[dtype]
        # representable numbers closest to k*pi/2: worst cases for the reduction
        k = rng.integers(1, int(big / 1.6), N // 4).astype(np.longdouble)
        near = (k * PIO2_LD).astype(np.float64)
        if f32:
            near = near.astype(np.float32)
        parts = [u(-10, 10, N), u(-big, big, N), _logu(rng, 1e-30, big, N, True), near]
    elif name in ("asin", "acos"):
        parts = [u(-1, 1, N), 1 - _logu(rng, 1e-16, 1, N), _logu(rng, 1e-30, 1, N, True),
                 u(0.49, 0.51, N // 4), -u(0.49, 0.51, N // 4)]
    elif name == "atan":
        parts = [u(-4, 4, N), _logu(rng, 1e-30, 1e30, N, True)]
    elif name in ("sinh", "cosh"):
        lim = 90 if f32 else 711
        parts = [u(-2, 2, N), u(-lim, lim, N), _logu(rng, 1e-30, 1, N, True)]
    elif name == "tanh":
        parts = [u(-25, 25, N), u(-1, 1, N), _logu(rng, 1e-30, 1, N, True)]
    elif name == "exp":
        lo, hi = (-105, 90) if f32 else (-746, 711)
        parts = [u(lo, hi, N), u(-1, 1, N), _logu(rng, 1e-30, 1, N, True)]
    elif name == "exp2":
        lo, hi = (-152, 130) if f32 else (-1077, 1026)
        parts = [u(lo, hi, N), u(-1, 1, N), _logu(rng, 1e-30, 1, N, True)]
    elif name == "expm1":
        lo, hi = (-40, 90) if f32 else (-60, 711)
        parts = [u(lo, hi, N), u(-2, 2, N), _logu(rng, 1e-30, 1, N, True)]
    elif name in ("log", "log2", "log10"):
        lo = float(fi.smallest_subnormal)
        parts = [_logu(rng, lo, float(fi.max), N), u(0.5, 2, N),
                 1 + _logu(rng, 1e-15, 0.1, N, True), u(0, 1e6, N)]
    elif name == "log1p":
        parts = [_logu(rng, 1e-30, 1, N, True), _logu(rng, 1e-6, 1e30, N),
                 -1 + _logu(rng, 1e-7 if f32 else 1e-15, 1, N), u(-0.5, 1, N)]
    elif name == "cbrt":
        lo = float(fi.smallest_subnormal)
        parts = [_logu(rng, lo, float(fi.max), N, True), u(-10, 10, N)]
    elif name == "erf":
        parts = [u(-7, 7, N), u(-1.5, 1.5, N), _logu(rng, 1e-30, 1, N, True)]
    else:
        raise KeyError(name)
    x = np.concatenate([np.asarray(p, dtype=np.float64) for p in parts] + [tinyv])
    with np.errstate(all="ignore"):
        return x.astype(dtype)


def binary_inputs(name, dtype):
    rng = np.random.default_rng(RNG_SEED)
    f32 = dtype == np.float32
    u = rng.uniform
    if name == "atan2":
        y = np.concatenate([_logu(rng, 1e-30, 1e30, N, True), u(-2, 2, N)])
        x = np.concatenate([_logu(rng, 1e-30, 1e30, N, True), u(-2, 2, N)])
    else:
        lim = 88.0 if f32 else 709.0
        # |y log x| spread over the whole representable range
        x1 = _logu(rng, 1e-30, 1e30, N)
        y1 = u(-1, 1, N) * lim / np.abs(np.log(x1)) * 1.05
        x2 = u(0, 4, N)
        y2 = u(-30, 30, N)
        x3 = 1 + u(-1e-3, 1e-3, N)                  # near 1, large exponents
        y3 = u(-1, 1, N) * lim * 1000
        x4 = -_logu(rng, 1e-3, 1e3, N)              # negative base, integer y
        y4 = np.round(u(-40, 40, N))
        x = np.concatenate([x1, x2, x3, x4])
        y = np.concatenate([y1, y2, y3, y4])
    with np.errstate(all="ignore"):
        return y.astype(dtype) if name == "atan2" else x.astype(dtype), \
            x.astype(dtype) if name == "atan2" else y.astype(dtype)


# measured max errors are <= 1.6 ulp (see the vecmath docstring); the bound
# leaves room for other inputs, and fails loudly on a real regression
BOUNDS = {name: 2.0 for name in vecmath.SUPPORTED + BINARY}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", vecmath.SUPPORTED)
def test_unary_accuracy(jit, name, dtype):
    bound = BOUNDS[name] + (LD_EXTRA if dtype == np.float64 else 0.0)
    if name == "erf" and dtype == np.float64:
        bound += 1.0       # math.erf is itself only ~1 ulp accurate
    check(jit, name, dtype, bound, inputs(name, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_accuracy(jit, name, dtype):
    bound = BOUNDS[name] + (LD_EXTRA if dtype == np.float64 else 0.0)
    check(jit, name, dtype, bound, *binary_inputs(name, dtype))


# ---------------------------------------------------------------------------
# special values: exact agreement with C99 (numpy follows libm here)
# ---------------------------------------------------------------------------

SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5,
            2.0, -2.0, 1e-45, -1e-45, 1e-310, -1e-310, 1e300, -1e300, 3.0,
            -3.0, 0.25, 1e-8, 1000.0, -1000.0, 89.0, -104.0, 710.0, -746.0]


def _same(res, ref):
    """Bitwise-class equality: NaN==NaN, signed zeros and infinities exact."""
    ok = (np.isnan(res) & np.isnan(ref)) | (res == ref)
    zero = (res == 0) & (ref == 0)
    ok &= ~zero | (np.signbit(res) == np.signbit(ref))
    return ok


def _check_specials(jit, name, dtype, *args):
    with np.errstate(all="ignore"):
        args = [np.asarray(a, dtype=np.float64).astype(dtype) for a in args]
        res = jit(dtype)(name, *args)
        ref = np.asarray(REF[name](*[a.astype(np.float64) for a in args])).astype(dtype)
    # exceptional results must match exactly; finite ones are covered by the
    # accuracy tests, but must be within a few ulp here too
    exceptional = ~np.isfinite(ref) | (ref == 0)
    bad = exceptional & ~_same(res, ref)
    err = ulp_error(res, reference(name, dtype, *args), dtype)
    if name in ("sin", "cos", "tan"):
        err = np.where(np.abs(args[0]) > TRIG_RANGE[dtype], 0.0, err)
    bad |= ~exceptional & (err > 4)
    idx = np.flatnonzero(bad)
    assert idx.size == 0, [(tuple(a[i] for a in args), res[i], ref[i]) for i in idx[:8]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", vecmath.SUPPORTED)
def test_unary_specials(jit, name, dtype):
    _check_specials(jit, name, dtype, SPECIALS)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_specials(jit, name, dtype):
    vals = SPECIALS + [0.75, -0.75, 1.5, -1.5, 4.0, -7.0, 2.5, 1e10, -1e10]
    a, b = np.meshgrid(np.asarray(vals), np.asarray(vals))
    _check_specials(jit, name, dtype, a.ravel(), b.ravel())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_trig_huge_arguments_bounded(jit, dtype):
    """Past the accurate range sin/cos/tan still give finite, bounded values."""
    rng = np.random.default_rng(RNG_SEED)
    fi = np.finfo(dtype)
    x = _logu(rng, TRIG_RANGE[dtype], float(fi.max), 20000, True).astype(dtype)
    for name in ("sin", "cos"):
        r = jit(dtype)(name, x)
        assert np.all(np.isfinite(r)) and np.all(np.abs(r) <= 1), name
    assert np.all(np.isfinite(jit(dtype)("tan", x)))


# ---------------------------------------------------------------------------
# vectorization, IR shape, API checks
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sin", "exp"])
def test_float32_loop_vectorizes(jit, name):
    text = jit(np.float32).ir_of(name)
    assert any(f"<{w} x float>" in text for w in (4, 8, 16)), text[:2000]
    assert "call float @sinf" not in text and "call float @expf" not in text


def test_all_loops_vectorize(jit):
    for dtype, tname in ((np.float32, "float"), (np.float64, "double")):
        c = jit(dtype)
        for name in vecmath.SUPPORTED + BINARY:
            assert f"x {tname}>" in c.ir_of(name), (name, tname)


def test_helpers_are_shared_and_no_libm():
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "g")
    b = ir.IRBuilder(fn.append_basic_block())
    v = vecmath.emit_unary(b, "sin", fn.args[0])
    v = vecmath.emit_unary(b, "sin", v)
    b.ret(vecmath.emit_pow(b, v, v))
    text = str(mod)
    defs = re.findall(r'define internal float @"?__weft_vm_sin_f32"?\(.*alwaysinline', text)
    assert len(defs) == 1
    for libm in ("@sinf", "@expf", "@exp(", "@log(", "@pow"):
        assert "declare float " + libm not in text and "declare double " + libm not in text


def test_bad_arguments():
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ir.IntType(32), ir.FloatType()]), "g")
    b = ir.IRBuilder(fn.append_basic_block())
    with pytest.raises(ValueError):
        vecmath.emit_unary(b, "gamma", fn.args[1])
    with pytest.raises(TypeError):
        vecmath.emit_unary(b, "sin", fn.args[0])
