// weft's C++ view of kernel values, for `@wp.func_native` snippets (weft/lang/native.py).
//
// A snippet is the body of a C++ function whose parameters are the Python function's, with
// these types: wp::float32 ... wp::uint64 for scalars, wp::vec_t<N, T>, wp::mat_t<R, C, T>,
// wp::quat_t<T>, wp::transform_t<T> for composites (laid out as weft lays them out in memory)
// and wp::array_t<T, NDIM> for arrays (weft's array descriptor). This is a small header, not
// Warp's C++ library: arithmetic, the common vector functions and <cmath>.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>

namespace wp {

typedef int8_t int8;
typedef uint8_t uint8;
typedef int16_t int16;
typedef uint16_t uint16;
typedef int32_t int32;
typedef uint32_t uint32;
typedef int64_t int64;
typedef uint64_t uint64;
typedef float float32;
typedef double float64;

using std::abs;
using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::ceil;
using std::cos;
using std::cosh;
using std::exp;
using std::floor;
using std::fmod;
using std::log;
using std::pow;
using std::round;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;

template <typename T> inline T min(T a, T b) { return b < a ? b : a; }
template <typename T> inline T max(T a, T b) { return a < b ? b : a; }

// Vectors ------------------------------------------------------------------------------------

template <unsigned N, typename T>
struct vec_t {
    T c[N];

    vec_t() : c{} {}
    explicit vec_t(T s) { for (unsigned i = 0; i < N; ++i) c[i] = s; }
    template <typename... A, typename = std::enable_if_t<(N > 1) && sizeof...(A) == N>>
    vec_t(A... a) : c{static_cast<T>(a)...} {}

    T& operator[](int i) { return c[i]; }
    const T& operator[](int i) const { return c[i]; }
};

template <unsigned N, typename T> inline vec_t<N, T> operator+(vec_t<N, T> a, const vec_t<N, T>& b) {
    for (unsigned i = 0; i < N; ++i) a.c[i] += b.c[i];
    return a;
}
template <unsigned N, typename T> inline vec_t<N, T> operator-(vec_t<N, T> a, const vec_t<N, T>& b) {
    for (unsigned i = 0; i < N; ++i) a.c[i] -= b.c[i];
    return a;
}
template <unsigned N, typename T> inline vec_t<N, T> operator-(vec_t<N, T> a) {
    for (unsigned i = 0; i < N; ++i) a.c[i] = -a.c[i];
    return a;
}
template <unsigned N, typename T> inline vec_t<N, T> operator*(vec_t<N, T> a, T s) {
    for (unsigned i = 0; i < N; ++i) a.c[i] *= s;
    return a;
}
template <unsigned N, typename T> inline vec_t<N, T> operator*(T s, vec_t<N, T> a) { return a * s; }
template <unsigned N, typename T> inline vec_t<N, T> operator/(vec_t<N, T> a, T s) {
    for (unsigned i = 0; i < N; ++i) a.c[i] /= s;
    return a;
}
template <unsigned N, typename T> inline vec_t<N, T>& operator+=(vec_t<N, T>& a, const vec_t<N, T>& b) {
    return a = a + b;
}
template <unsigned N, typename T> inline vec_t<N, T>& operator-=(vec_t<N, T>& a, const vec_t<N, T>& b) {
    return a = a - b;
}
template <unsigned N, typename T> inline vec_t<N, T>& operator*=(vec_t<N, T>& a, T s) { return a = a * s; }

template <unsigned N, typename T> inline T dot(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    T s = T(0);
    for (unsigned i = 0; i < N; ++i) s += a.c[i] * b.c[i];
    return s;
}
template <unsigned N, typename T> inline T length_sq(const vec_t<N, T>& a) { return dot(a, a); }
template <unsigned N, typename T> inline T length(const vec_t<N, T>& a) { return std::sqrt(dot(a, a)); }
template <unsigned N, typename T> inline vec_t<N, T> normalize(const vec_t<N, T>& a) {
    T l = length(a);
    return l > T(0) ? a / l : vec_t<N, T>();
}
template <typename T> inline vec_t<3, T> cross(const vec_t<3, T>& a, const vec_t<3, T>& b) {
    return vec_t<3, T>(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}

// Matrices (row-major) -----------------------------------------------------------------------

template <unsigned R, unsigned C, typename T>
struct mat_t {
    T data[R][C];

    mat_t() : data{} {}
    template <typename... A, typename = std::enable_if_t<sizeof...(A) == R * C && (R * C > 1)>>
    mat_t(A... a) {
        T flat[R * C] = {static_cast<T>(a)...};
        for (unsigned i = 0; i < R * C; ++i) data[i / C][i % C] = flat[i];
    }

    T& operator()(int i, int j) { return data[i][j]; }
    const T& operator()(int i, int j) const { return data[i][j]; }
    vec_t<C, T> get_row(int i) const {
        vec_t<C, T> r;
        for (unsigned j = 0; j < C; ++j) r.c[j] = data[i][j];
        return r;
    }
};

template <unsigned R, unsigned C, typename T>
inline mat_t<R, C, T> operator+(mat_t<R, C, T> a, const mat_t<R, C, T>& b) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) a.data[i][j] += b.data[i][j];
    return a;
}
template <unsigned R, unsigned C, typename T>
inline mat_t<R, C, T> operator-(mat_t<R, C, T> a, const mat_t<R, C, T>& b) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) a.data[i][j] -= b.data[i][j];
    return a;
}
template <unsigned R, unsigned C, typename T> inline mat_t<R, C, T> operator*(mat_t<R, C, T> a, T s) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) a.data[i][j] *= s;
    return a;
}
template <unsigned R, unsigned C, typename T> inline mat_t<R, C, T> operator*(T s, mat_t<R, C, T> a) {
    return a * s;
}
template <unsigned R, unsigned C, typename T>
inline vec_t<R, T> operator*(const mat_t<R, C, T>& m, const vec_t<C, T>& v) {
    vec_t<R, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.c[i] += m.data[i][j] * v.c[j];
    return r;
}
template <unsigned R, unsigned K, unsigned C, typename T>
inline mat_t<R, C, T> operator*(const mat_t<R, K, T>& a, const mat_t<K, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j)
            for (unsigned k = 0; k < K; ++k) r.data[i][j] += a.data[i][k] * b.data[k][j];
    return r;
}
template <unsigned R, unsigned C, typename T> inline mat_t<C, R, T> transpose(const mat_t<R, C, T>& a) {
    mat_t<C, R, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.data[j][i] = a.data[i][j];
    return r;
}

// Quaternions (x, y, z, w) and transforms (p, q) ------------------------------------------------

template <typename T>
struct quat_t {
    T x, y, z, w;
    quat_t() : x(0), y(0), z(0), w(0) {}
    quat_t(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}
};

template <typename T>
struct transform_t {
    vec_t<3, T> p;
    quat_t<T> q;
};

// Arrays: weft's descriptor (data, shape, byte strides, gradient, ndim) -------------------------

inline void report_out_of_bounds() {
    static bool reported = false;  // (a message, not a crash: the access goes to a scratch value)
    if (!reported) {
        reported = true;
        std::fprintf(stderr, "weft: a func_native snippet indexed an array out of bounds\n");
    }
}

template <typename T, int NDIM = 1>
struct array_t {
    T* data;
    int64_t shape[NDIM];
    int64_t strides[NDIM];
    T* grad;
    int32_t ndim;

    template <typename... I> T* address(I... index) {
        static_assert(sizeof...(I) == NDIM, "index an array with one index per dimension");
        int64_t idx[NDIM] = {static_cast<int64_t>(index)...};
        char* p = reinterpret_cast<char*>(data);
        for (int d = 0; d < NDIM; ++d) {
            if (!p || idx[d] < 0 || idx[d] >= shape[d]) {
                report_out_of_bounds();
                static T scratch;
                return &scratch;
            }
            p += idx[d] * strides[d];
        }
        return reinterpret_cast<T*>(p);
    }
    T& operator[](int64_t i) { return *address(i); }
    template <typename... I> T& operator()(I... index) { return *address(index...); }
};

template <typename T, int NDIM, typename... I> inline T* address(array_t<T, NDIM>& a, I... index) {
    return a.address(index...);
}
template <typename T, int NDIM, typename... I> inline T& index(array_t<T, NDIM>& a, I... index) {
    return *a.address(index...);
}

// Atomic adds (threads of a launch run in parallel) ---------------------------------------------

template <typename T> inline T atomic_add(T* address, T value) {
    if constexpr (std::is_integral_v<T>) {
        return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
    } else {
        T old = *address;
        T desired = old + value;
        while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            desired = old + value;
        return old;
    }
}
template <typename T> inline T atomic_add(array_t<T, 1>& a, int64_t i, T value) {
    return atomic_add(a.address(i), value);
}

}  // namespace wp

// Warp's tile barrier and thread index, for snippets written for tiled launches: a block on
// the CPU is one thread (Warp's default; weft's cooperative blocks run snippets lane by lane,
// so a barrier inside one cannot be honoured there), and the barrier waits for nobody.
namespace wp {
inline void tile_sync() {}
}  // namespace wp
#define WP_TILE_SYNC ::wp::tile_sync
#define WP_TILE_THREAD_IDX 0
