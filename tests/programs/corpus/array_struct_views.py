"""Arrays of structs as views and copies: 2-D struct arrays, row and step-slice views filled with
struct instances and with 0, assign from a list of instances and from a structured numpy array,
wp.copy between struct arrays and views, clone, zeros_like, wp.full with a struct value, numpy()
field access of nested structs with vector and matrix fields, list() of a view, struct arrays read
and written in kernels through views, and an instance read back through list() (Warp refuses a[i, j] on arrays)."""

import numpy as np
import warp as wp


@wp.struct
class Joint:
    axis: wp.vec3
    limit: wp.vec2
    frame: wp.mat22


@wp.struct
class Link:
    mass: float
    joint: Joint
    parent: wp.int32


@wp.kernel
def settle(links: wp.array2d(dtype=Link), g: float):
    i, j = wp.tid()
    ln = links[i, j]
    ln.mass = ln.mass + g * float(i + 1)
    ln.joint.limit = wp.vec2(ln.joint.limit[1], -ln.joint.limit[0])
    ln.parent = i * 10 + j
    links[i, j] = ln


@wp.kernel
def masses(links: wp.array(dtype=Link), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = links[i].mass + links[i].joint.axis[2] + links[i].joint.frame[0, 1]


def make_link(m, k):
    ln = Link()
    ln.mass = m
    ln.parent = -1
    ln.joint.axis = wp.vec3(0.0, 0.0, float(k))
    ln.joint.limit = wp.vec2(-float(k), float(k))
    ln.joint.frame = wp.mat22(1.0, float(k), 0.0, 1.0)
    return ln


def fields(a):
    n = a.numpy()
    return {
        "mass": n["mass"].copy(),
        "parent": n["parent"].copy(),
        "axis": n["joint"]["axis"].copy(),
        "limit": n["joint"]["limit"].copy(),
        "frame": n["joint"]["frame"].copy(),
    }


def run():
    r = {}
    grid = wp.zeros((3, 4), dtype=Link)
    grid[1].fill_(make_link(2.0, 1))
    grid[:, ::3].fill_(make_link(5.0, 2))
    grid[2, 1:3].fill_(0)
    for k, v in fields(grid).items():
        r["fill_" + k] = v
    wp.launch(settle, dim=(3, 4), inputs=[grid, 0.5])
    for k, v in fields(grid).items():
        r["settle_" + k] = v
    row = wp.zeros(4, dtype=Link)
    wp.copy(row, grid[1])
    r["copy_row_mass"] = row.numpy()["mass"].copy()
    col = wp.zeros(3, dtype=Link)
    wp.copy(col, grid[:, 3])
    r["copy_col_parent"] = col.numpy()["parent"].copy()
    lst = wp.zeros(3, dtype=Link)
    lst.assign([make_link(1.0, 3), make_link(2.0, 4), make_link(3.0, 5)])
    out = wp.zeros(3, dtype=float)
    wp.launch(masses, dim=3, inputs=[lst, out])
    r["assign_list_masses"] = out.numpy().copy()
    structured = lst.numpy().copy()
    structured["mass"] *= 10.0
    structured["joint"]["axis"][:, 0] = [7.0, 8.0, 9.0]
    back = wp.zeros(3, dtype=Link)
    back.assign(structured)
    r["assign_structured_mass"] = back.numpy()["mass"].copy()
    r["assign_structured_axis"] = back.numpy()["joint"]["axis"].copy()
    cl = wp.clone(grid[::2, 1:])
    r["clone_shape"] = np.array(cl.shape)
    r["clone_mass"] = cl.numpy()["mass"].copy()
    zl = wp.zeros_like(grid)
    r["zeros_like_mass_sum"] = float(zl.numpy()["mass"].sum())
    full = wp.full(2, make_link(4.0, 6), dtype=Link)
    r["full_frame"] = full.numpy()["joint"]["frame"].copy()
    items = grid[0, ::2].list()
    r["list_len"] = len(items)
    r["list_mass"] = np.array([x.mass for x in items])
    r["list_limit"] = np.array([list(x.joint.limit) for x in items])
    one = grid[2, 3:].list()[0]
    r["last_instance"] = np.array([one.mass, one.parent, one.joint.axis[2], one.joint.frame[0, 1]])
    return r
