"""Saved graphs (runtime/capture_io.py): a graph captured with apic=True is written by
capture_save and read back by capture_load / capture_load_from_bytes, in this process or
another one; named arrays are read and written through Graph.set_param / get_param."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import weft as wp


@wp.kernel
def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def write_then_read(first: wp.array(dtype=float), second: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    first[i + 2] = 99.0 + float(i)
    out[i] = second[i]


@wp.struct
class Particles:
    pos: wp.array(dtype=wp.vec3)
    vel: wp.array(dtype=wp.vec3)
    dt: float


@wp.kernel
def step(p: Particles, gain: wp.vec3):
    i = wp.tid()
    p.pos[i] = p.pos[i] + p.vel[i] * p.dt + gain


@wp.kernel
def square_sum(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, x[wp.tid()] * x[wp.tid()])


def _save_load(graph, tmp_path, **names):
    path = str(tmp_path / "graph")
    wp.capture_save(graph, path, **names)
    assert (tmp_path / "graph.wrp").exists() and (tmp_path / "graph_modules").is_dir()
    return wp.capture_load(path)


def test_round_trip_runs_on_new_inputs(tmp_path):
    src = wp.array(np.array([1, 2, 3, 4, 5], dtype=np.int32))
    scanned = wp.zeros_like(src)
    x, y = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)
    with wp.ScopedCapture(apic=True) as capture:
        wp.utils.array_scan(src, scanned, inclusive=False)
        y.fill_(1.0)
        wp.launch(axpy, 4, [x, y, 3.0])
        wp.copy(x, y)
    loaded = _save_load(capture.graph, tmp_path, inputs={"src": src, "x": x}, outputs={"scanned": scanned, "y": y})
    assert loaded.is_loaded and not capture.graph.is_loaded
    assert loaded.params["src"] == {"size": 20} and loaded.params["y"] == {"size": 16}
    loaded.set_param("src", wp.array(np.array([5, 1, 4, 1, 3], dtype=np.int32)))
    loaded.set_param("x", wp.array(np.array([1, 1, 2, 2], dtype=np.float32)))
    for expected_x in ([4, 4, 7, 7], [13, 13, 22, 22]):  # (x is overwritten by y on each run)
        wp.capture_launch(loaded)
        out = wp.zeros(4)
        loaded.get_param("x", out)
        np.testing.assert_array_equal(out.numpy(), expected_x)
    got = wp.zeros(5, dtype=wp.int32)
    loaded.get_param("scanned", got)
    np.testing.assert_array_equal(got.numpy(), [0, 5, 6, 10, 11])
    np.testing.assert_array_equal(x.numpy(), np.arange(4))  # the original arrays are untouched
    assert loaded.get_param_ptr("x") and loaded.get_param_ptr("nothing") is None


def test_unnamed_arrays_keep_their_contents_and_aliases_survive(tmp_path):
    base = wp.array(np.arange(6, dtype=np.float32))
    first, overlapping = base[:], base[2:]  # two views of one allocation
    out = wp.zeros(4)
    with wp.ScopedCapture(apic=True) as capture:
        wp.launch(write_then_read, 4, [first, overlapping, out])
    loaded = _save_load(capture.graph, tmp_path, outputs={"out": out})
    wp.capture_launch(loaded)
    result = wp.zeros(4)
    loaded.get_param("out", result)
    np.testing.assert_array_equal(result.numpy(), [99, 100, 101, 102])  # read through the alias


def test_struct_and_vector_arguments(tmp_path):
    p = Particles()
    p.pos = wp.zeros(3, dtype=wp.vec3)
    p.vel = wp.array(np.ones((3, 3), dtype=np.float32), dtype=wp.vec3)
    p.dt = 0.5
    with wp.ScopedCapture(apic=True) as capture:
        wp.launch(step, 3, [p, wp.vec3(0.0, 1.0, 2.0)])
    loaded = _save_load(capture.graph, tmp_path, outputs={"pos": p.pos})
    wp.capture_launch(loaded)
    wp.capture_launch(loaded)
    result = wp.zeros(3, dtype=wp.vec3)
    loaded.get_param("pos", result)
    np.testing.assert_allclose(result.numpy(), np.tile([1.0, 3.0, 5.0], (3, 1)))
    np.testing.assert_array_equal(p.pos.numpy(), 0.0)


def test_tape_backward_in_a_capture_replays_and_saves(tmp_path):
    x = wp.array(np.arange(5, dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    with wp.ScopedCapture(apic=True) as capture:
        tape = wp.Tape()
        with tape:
            wp.launch(square_sum, 5, [x, loss])
        tape.backward(loss)
    x.grad.zero_()  # nothing ran yet: the replay computes the gradient
    wp.capture_launch(capture.graph)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.arange(5))
    x.grad.zero_()
    loss.zero_()
    loaded = _save_load(capture.graph, tmp_path, inputs={"x": x}, outputs={"grad": x.grad})
    loaded.set_param("x", wp.array(np.full(5, 3.0, dtype=np.float32)))
    wp.capture_launch(loaded)
    grad = wp.zeros(5)
    loaded.get_param("grad", grad)
    np.testing.assert_allclose(grad.numpy(), np.full(5, 6.0))


def test_reductions_are_recorded_with_an_out_array():
    a, total = wp.zeros(4), wp.full(1, -1.0)
    with wp.ScopedCapture(apic=True) as capture:
        a.fill_(2.0)
        wp.utils.array_sum(a, out=total)
        with pytest.raises(NotImplementedError, match="explicit out"):
            wp.utils.array_sum(a)
    assert total.numpy()[0] == -1.0
    wp.capture_launch(capture.graph)
    assert total.numpy()[0] == 8.0


def test_load_from_bytes_and_in_a_new_process(tmp_path):
    module = tmp_path / "saved_kernels.py"
    module.write_text(textwrap.dedent("""
        import weft as wp

        @wp.kernel
        def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = x[i] * x[i] * x[i]
    """))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), repo])}
    save = textwrap.dedent(f"""
        import numpy as np, weft as wp, saved_kernels
        x, y = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)
        with wp.ScopedCapture(apic=True) as c:
            wp.launch(saved_kernels.cube, 4, [x, y])
        wp.capture_save(c.graph, {str(tmp_path / 'cube')!r}, inputs={{"x": x}}, outputs={{"y": y}})
    """)
    load = textwrap.dedent(f"""
        import numpy as np, weft as wp
        g = wp.capture_load({str(tmp_path / 'cube')!r})  # (imports saved_kernels itself)
        g.set_param("x", wp.array(np.array([1, 2, 3, -1], dtype=np.float32)))
        wp.capture_launch(g)
        y = wp.zeros(4)
        g.get_param("y", y)
        print(y.numpy().tolist())
    """)
    subprocess.run([sys.executable, "-c", save], env=env, check=True, timeout=300)
    done = subprocess.run([sys.executable, "-c", load], env=env, check=True, timeout=300,
                          capture_output=True, text=True)
    assert done.stdout.strip() == "[1.0, 8.0, 27.0, -1.0]"
    module.write_text(module.read_text().replace("x[i] * x[i] * x[i]", "x[i] * x[i]"))  # edited since
    refused = subprocess.run([sys.executable, "-c", load], env=env, timeout=300, capture_output=True, text=True)
    assert refused.returncode != 0 and "kernel 'cube' of module 'saved_kernels' has changed" in refused.stderr
    module.write_text(module.read_text().replace("x[i] * x[i]", "x[i] * x[i] * x[i]"))
    data = (tmp_path / "cube.wrp").read_bytes()
    sys.path.insert(0, str(tmp_path))
    try:
        folder = tmp_path / "cube_modules"
        modules = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
        graph = wp.capture_load_from_bytes(np.frombuffer(data, dtype=np.uint8), modules)
    finally:
        sys.path.remove(str(tmp_path))
    wp.capture_launch(graph)
    y = wp.zeros(4)
    graph.get_param("y", y)
    np.testing.assert_array_equal(y.numpy(), [0, 1, 8, 27])  # the inputs as saved


@wp.kernel
def bvh_handle_kernel(bvh: wp.uint64):
    wp.bvh_query_aabb(bvh, wp.vec3(0.0), wp.vec3(1.0))


def test_what_cannot_be_saved_or_loaded(tmp_path):
    path = str(tmp_path / "g")
    with wp.ScopedCapture() as plain:
        wp.zeros(2).fill_(1.0)
    with pytest.raises(RuntimeError, match="apic=True"):
        wp.capture_save(plain.graph, path)
    with pytest.raises(RuntimeError, match="only supported on loaded"):
        plain.graph.set_param("a", wp.zeros(2))
    bvh = wp.Bvh(wp.array([[0.0, 0.0, 0.0]], dtype=wp.vec3), wp.array([[1.0, 1.0, 1.0]], dtype=wp.vec3))
    with wp.ScopedCapture(apic=True) as refit:
        bvh.refit()
    with pytest.raises(RuntimeError, match=r"wp\.Bvh\.refit\(\)"):
        wp.capture_save(refit.graph, path)
    assert not os.path.exists(path + ".wrp")
    with wp.ScopedCapture(apic=True) as handles:  # a live object's address: dangles elsewhere
        wp.launch(bvh_handle_kernel, 1, [bvh.id])
    with pytest.raises(RuntimeError, match="the id of a live Bvh"):
        wp.capture_save(handles.graph, path)

    a = wp.zeros(4)
    with wp.ScopedCapture(apic=True) as ok:
        a.fill_(1.0)
    wp.capture_save(ok.graph, path, outputs={"a": a})
    loaded = wp.capture_load(path)
    with pytest.raises(RuntimeError, match="16 bytes"):
        loaded.get_param("a", wp.zeros(5))
    with pytest.raises(RuntimeError, match="no such parameter"):
        loaded.get_param("b", wp.zeros(4))
    with pytest.raises(TypeError):
        loaded.set_param("a", np.zeros(4, dtype=np.float32))
    with pytest.raises(RuntimeError, match="Failed to load APIC graph"):
        wp.capture_load(str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="malformed"):
        wp.capture_load_from_bytes(b"not a graph")
    with pytest.raises(TypeError):
        wp.capture_load_from_bytes("text")


@wp.kernel
def count_down(n: wp.array(dtype=wp.int32), steps: wp.array(dtype=float)):
    n[0] = n[0] - 1
    steps[0] = steps[0] + 1.0


def test_loops_branches_and_nested_graphs(tmp_path):
    n, steps, flag = wp.array([3], dtype=wp.int32), wp.zeros(1), wp.array([1], dtype=wp.int32)
    with wp.ScopedCapture(apic=True) as inner:
        steps.fill_(100.0)
    with wp.ScopedCapture(apic=True) as capture:
        wp.capture_while(n, lambda: wp.launch(count_down, 1, [n, steps]))
        wp.capture_if(flag, on_true=lambda: wp.launch(count_down, 1, [n, steps]), on_false=inner.graph)
    loaded = _save_load(capture.graph, tmp_path, inputs={"n": n, "flag": flag}, outputs={"steps": steps})
    out = wp.zeros(1)
    for count, branch, expected in ((3, 1, 4.0), (5, 0, 100.0), (2, 1, 2.0 + 100.0 + 1.0)):
        loaded.set_param("n", wp.array([count], dtype=wp.int32))
        loaded.set_param("flag", wp.array([branch], dtype=wp.int32))
        wp.capture_launch(loaded)
        loaded.get_param("steps", out)
        assert out.numpy()[0] == expected


def test_module_files_are_needed_and_checked(tmp_path):
    x, y = wp.array(np.ones(4, dtype=np.float32)), wp.zeros(4)
    with wp.ScopedCapture(apic=True) as capture:
        wp.launch(axpy, 4, [x, y, 2.0])
    path = str(tmp_path / "g")
    wp.capture_save(capture.graph, path, outputs={"y": y})
    data = (tmp_path / "g.wrp").read_bytes()
    (name,) = os.listdir(tmp_path / "g_modules")
    contents = (tmp_path / "g_modules" / name).read_bytes()
    for given in (None, {}, {"g_modules/" + name: contents}):
        with pytest.raises(RuntimeError, match=name):
            wp.capture_load_from_bytes(data, given)
    for bad in (b"", b"\xff" * len(contents), contents.replace(b'"axpy', b'"other')):
        with pytest.raises(RuntimeError, match="module file"):
            wp.capture_load_from_bytes(data, {name: bad})
    graph = wp.capture_load_from_bytes(data, {name: contents, "unused.o": b"ignored"})
    wp.capture_launch(graph)
    graph.get_param("y", y)
    np.testing.assert_array_equal(y.numpy(), 2.0)


@wp.kernel
def write_indexed(arr: wp.indexedarray(dtype=float), v: float):
    arr[wp.tid()] = v


def test_indexed_array_arguments(tmp_path):
    base = wp.array(np.arange(10, dtype=np.float32))
    picked = wp.indexedarray1d(base, [wp.array([1, 3, 5, 7, 9], dtype=wp.int32)])
    with wp.ScopedCapture(apic=True) as capture:
        wp.launch(write_indexed, picked.size, [picked, 42.0])
    loaded = _save_load(capture.graph, tmp_path, outputs={"base": base})
    wp.capture_launch(loaded)
    result = wp.zeros(10)
    loaded.get_param("base", result)
    expected = np.arange(10, dtype=np.float32)
    expected[1::2] = 42.0
    np.testing.assert_array_equal(result.numpy(), expected)
    np.testing.assert_array_equal(base.numpy(), np.arange(10))


def test_apic_capture_refuses_launches_with_raw_ctype_parameters():
    a, out = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)
    cmd = wp.launch(axpy, 4, [a, out, 2.0], record_cmd=True)
    cmd.set_param_at_index_from_ctype(0, a.__ctype__())
    with pytest.raises(NotImplementedError, match="raw array ctype"):
        with wp.ScopedCapture(apic=True):
            cmd.launch()
    with wp.ScopedCapture() as plain:  # (a capture that will not be saved takes it)
        cmd.launch()
    wp.capture_launch(plain.graph)
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(4))


def test_a_bad_segment_found_when_the_graph_runs_is_a_runtime_error():
    keys = wp.array(np.array([3, 1, 2, 0, 0, 0, 0, 0], dtype=np.int32))
    values = wp.zeros(8, dtype=wp.int32)  # (2 * count: Warp's scratch space)
    starts, ends = wp.array([0], dtype=wp.int32), wp.array([4], dtype=wp.int32)
    with wp.ScopedCapture(apic=True) as capture:
        wp.utils.segmented_sort_pairs(keys, values, 4, starts, ends)
    ends.fill_(5)
    with pytest.raises(RuntimeError, match="Invalid segment range at index 0"):
        wp.capture_launch(capture.graph)
    with pytest.raises(ValueError, match="Invalid segment range at index 0"):
        wp.utils.segmented_sort_pairs(keys, values, 4, starts, ends)


def test_meshes_whose_ids_the_graph_passes_are_saved_with_it(tmp_path):
    module = tmp_path / "mesh_kernels.py"
    module.write_text(textwrap.dedent("""
        import weft as wp

        @wp.kernel
        def distance(mesh: wp.uint64, ids: wp.array(dtype=wp.uint64), p: wp.array(dtype=wp.vec3),
                     d: wp.array2d(dtype=float)):
            i = wp.tid()
            for k in range(2):
                m = mesh if k == 0 else ids[0]
                r = wp.mesh_query_point(m, p[i], 100.0)
                d[k, i] = wp.length(p[i] - wp.mesh_eval_position(m, r.face, r.u, r.v))
    """))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), repo])}
    save = textwrap.dedent(f"""
        import numpy as np, weft as wp, mesh_kernels
        low = wp.Mesh(wp.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))
        high = wp.Mesh(wp.array([[0, 0, 5], [1, 0, 5], [0, 1, 5]], dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))
        ids = wp.array([high.id], dtype=wp.uint64)
        p, d = wp.array([[0.2, 0.2, 1.0], [0.1, 0.1, -1.0]], dtype=wp.vec3), wp.zeros((2, 2))
        with wp.ScopedCapture(apic=True) as c:
            wp.launch(mesh_kernels.distance, 2, [low.id, ids, p, d])
        wp.capture_save(c.graph, {str(tmp_path / 'meshes')!r}, inputs={{"p": p}}, outputs={{"d": d}})
    """)
    load = textwrap.dedent(f"""
        import weft as wp
        g = wp.capture_load({str(tmp_path / 'meshes')!r})
        wp.capture_launch(g)
        d = wp.zeros((2, 2))
        g.get_param("d", d)
        print(d.numpy().round(4).tolist())
    """)
    subprocess.run([sys.executable, "-c", save], env=env, check=True, timeout=300)
    done = subprocess.run([sys.executable, "-c", load], env=env, check=True, timeout=300,
                          capture_output=True, text=True)
    assert done.stdout.strip() == "[[1.0, 1.0], [4.0, 6.0]]"


@wp.struct
class MeshRef:
    mesh_id: wp.uint64


@wp.struct
class Tagged:
    tag: wp.uint64
    ref: MeshRef


@wp.kernel
def distance_through_records(refs: wp.array(dtype=Tagged), p: wp.array(dtype=wp.vec3), d: wp.array(dtype=float)):
    i = wp.tid()
    m = refs[0].ref.mesh_id
    r = wp.mesh_query_point(m, p[i], 100.0)
    d[i] = wp.length(p[i] - wp.mesh_eval_position(m, r.face, r.u, r.v))


def test_arrays_of_structs_and_mesh_ids_inside_them(tmp_path):
    mesh = wp.Mesh(wp.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))
    record = Tagged()
    record.tag = 7
    record.ref = MeshRef()
    record.ref.mesh_id = mesh.id
    refs = wp.array([record], dtype=Tagged)
    p, d = wp.array([[0.2, 0.2, 1.0], [0.1, 0.1, -3.0]], dtype=wp.vec3), wp.zeros(2)
    with wp.ScopedCapture(apic=True) as capture:
        wp.launch(distance_through_records, 2, [refs, p, d])
    loaded = _save_load(capture.graph, tmp_path, outputs={"d": d, "refs": refs})
    wp.capture_launch(loaded)
    got, saved_refs = wp.zeros(2), wp.zeros(1, dtype=Tagged)
    loaded.get_param("d", got)
    loaded.get_param("refs", saved_refs)
    np.testing.assert_allclose(got.numpy(), [1.0, 3.0], rtol=1e-6)
    tag, (mesh_id,) = saved_refs.numpy()[0].tolist()
    assert tag == 7 and mesh_id != mesh.id  # a mesh of its own, rebuilt from the saved points

    @wp.struct
    class WithArray:
        a: wp.array(dtype=float)
    holders = wp.zeros(1, dtype=WithArray)
    with wp.ScopedCapture(apic=True) as refused:
        holders.zero_()
    with pytest.raises(RuntimeError, match="cannot save"):  # (records holding addresses)
        wp.capture_save(refused.graph, str(tmp_path / "refused"))
