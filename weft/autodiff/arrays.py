"""What the reverse pass knows about array values: where an array comes from (a parameter,
a field of a struct parameter, a view of one, a field of a struct built in the kernel),
keys that identify the same memory or index across ops, which arrays a kernel reads and
writes, and which ones each thread owns alone."""

from __future__ import annotations

from ..ir.core import Function, Op, Value, constant_value, walk
from ..types import ArrayType, StructType


def private_arrays(fn: Function) -> set:
    """Array parameters that every access indexes by exactly the thread index: each thread
    owns its elements, so their adjoints can be accumulated without atomics."""
    params = {p.id: p for p in fn.params if isinstance(p.type, ArrayType)}
    private = {k for k, p in params.items() if not p.type.indexed}  # indices may repeat
    for op in walk(fn.body):
        if op.name in ("view", "slice", "component"):
            private.discard(op.operands[0].id)
        for arr in native_arrays(op):
            private.discard(arr.id)
        if op.name not in ("load", "store", "atomic") or op.operands[0].id not in params:
            continue
        arr = op.operands[0]
        indices = op.operands[1:1 + arr.type.ndim]
        if not indexed_by_thread(indices):
            private.discard(arr.id)
    return private


def thread_owned_arrays(fn: Function) -> set:
    """Arrays (`array_key`) that every access indexes, at the same positions, by the whole
    thread index (`i = tid()`, or each of `i, j = tid()`), directly, with no view, snippet
    or indexed array: no other thread reaches an element a thread does, so where a thread
    reads an element after writing the array, and does not write it again, memory after
    the launch holds what it read (`out[i, 0] = a; out[i, 1] = b; ... out[i, j]`)."""
    common: dict = {}
    for op in walk(fn.body):
        seen = native_arrays(op) + (op.operands[:1] if op.name in ("view", "slice", "component") else [])
        for arr in seen:
            common[array_key(arr)] = frozenset()
        if op.name not in ("load", "store", "atomic") or is_local_array(op.operands[0]):
            continue
        arr = op.operands[0]
        key = array_key(arr)
        if getattr(arr.type, "indexed", False):
            common[key] = frozenset()
            continue
        at = frozenset((k, i.owner.attrs["dim"], i.owner.attrs["of"])
                       for k, i in enumerate(op.operands[1:1 + arr.type.ndim])
                       if isinstance(i.owner, Op) and i.owner.name == "tid")
        common[key] = common[key] & at if key in common else at

    def whole(places) -> bool:
        if any(dim == -1 or of == 1 for _, dim, of in places):
            return True
        return any({dim for _, dim, o in places if o == of} == set(range(of)) for _, _, of in places)
    return {key for key, places in common.items() if whole(places)}


def native_arrays(op: Op) -> list[Value]:
    """The arrays a call of a C++ snippet (`@func_native`) is passed: it may read and
    write any of their elements, which the IR does not see."""
    if op.name == "call" and op.attrs["fn"].native:
        return [v for v in op.operands if isinstance(v.type, ArrayType)]
    return []


def array_root(arr: Value) -> Value:
    """The array an array value views into (itself if it is not a view), seen through
    structs built in the kernel (`State(state.x, ...).x` is `state.x`)."""
    while isinstance(arr.owner, Op):
        if arr.owner.name in ("view", "slice", "component"):
            arr = arr.owner.operands[0]
            continue
        source = field_source(arr)
        if source is None:
            break
        arr = source
    return arr


def is_local_array(arr: Value) -> bool:
    """Whether array value `arr` is (a view of) a kernel-local array (`zeros()` in a kernel):
    the thread's own memory, which the adjoint's replay writes again as the kernel did."""
    root = array_root(arr)
    return isinstance(root.owner, Op) and root.owner.name == "local_array"


def unrecoverable_local_read(fn: Function) -> Op | None:
    """A read of a kernel-local array whose value the adjoint cannot recover, or None.

    The adjoint replays the kernel once, writing its local arrays again, so reads in
    straight-line code see what they saw; but it recomputes each loop iteration and each
    branch taken as it reverses them, after the code that followed them has (in the replay)
    written the array. A read inside a loop or branch (an op with regions, in the block that
    makes the array) is recoverable only if neither that op nor anything after it writes the
    array (conservative: a branch writing before it reads would do too)."""
    blocks = [fn.body, *(r for op in walk(fn.body) for r in op.regions)]
    for block in blocks:
        for at, op in enumerate(block.ops):
            if op.name != "local_array":
                continue
            later = block.ops[at + 1:]

            def touches(ops, names, local=op.result):
                return [o for top in ops for o in (top, *(i for r in top.regions for i in walk(r)))
                        if o.name in names and array_root(o.operands[0]) is local]
            for k, top in enumerate(later):
                reads = touches([top], ("load",)) if top.regions else []
                if reads and touches(later[k:], ("store", "atomic")):
                    return reads[0]
    return None


def field_source(v: Value) -> Value | None:
    """For `v`, a field extracted from a struct built in the kernel (by `construct` and
    `insert`), the value that field was built from; else None."""
    if not (isinstance(v.owner, Op) and v.owner.name == "extract"):
        return None
    agg, k = v.owner.operands[0], v.owner.attrs["index"]
    while isinstance(agg.owner, Op) and isinstance(agg.type, StructType):
        if agg.owner.name == "construct":
            return agg.owner.operands[k]
        if agg.owner.name != "insert":
            return None
        if agg.owner.attrs["index"] == k:
            return agg.owner.operands[1]
        agg = agg.owner.operands[0]
    return None


def array_origin(arr: Value) -> tuple[Value, tuple]:
    """Where array value `arr` comes from: the value it views into (a parameter, usually)
    or, for an array held in a struct, the struct value the field path leads from (through
    nested structs), and that path of field indices (empty for a plain array)."""
    arr = array_root(arr)
    path = []
    while isinstance(arr.owner, Op) and arr.owner.name == "extract" and \
            isinstance(arr.owner.operands[0].type, StructType):
        path.append(arr.owner.attrs["index"])
        arr = arr.owner.operands[0]
        while (source := field_source(arr)) is not None:  # a struct built from another one's field
            arr = source
    return arr, tuple(reversed(path))


def array_key(arr: Value) -> tuple:
    """An identity of the memory an array value reaches: (origin value id, field path)."""
    origin, path = array_origin(arr)
    return origin.id, path


def value_key(v: Value):
    """What identifies an array or index value across separate ops that compute the same
    thing: a constant by its value, an array by where it comes from (field path, views with
    their indices), arithmetic by its operation and operands; anything else by the value
    itself."""
    owner = v.owner
    if isinstance(owner, Op):
        if owner.name == "const":
            return ("const", repr(v.type), owner.attrs["value"])
        if owner.name == "view":
            return ("view", value_key(owner.operands[0]), tuple(value_key(i) for i in owner.operands[1:]))
        if owner.name == "slice":  # (`a[s:e:k][i] = ...` evaluates the slice for the load and the store)
            return ("slice", value_key(owner.operands[0]), owner.attrs["keys"],
                    tuple(value_key(i) for i in owner.operands[1:]))
        if owner.name == "component":
            return ("component", value_key(owner.operands[0]), owner.attrs["path"],
                    tuple(value_key(i) for i in owner.operands[1:]))
        if owner.name == "extract" and isinstance(v.type, ArrayType):
            return ("field", array_key(v))
        if owner.name in ("binary", "unary", "cast"):  # (pure: `2 * i` written twice is one index)
            return (owner.name, owner.attrs.get("op"), repr(v.type), tuple(value_key(x) for x in owner.operands))
    return v.id


def array_final_reads(fn: Function) -> set:
    """Ids of the array parameters whose contents after the launch the adjoint reads: the
    targets of float atomic_min/max (the final element tells which value won), and arrays
    read after this thread wrote them and never written again (see `LoadPlan`)."""
    from .reverse import active_types
    minmax = {array_root(op.operands[0]).id for op in walk(fn.body)
              if op.name == "atomic" and op.attrs["op"] in ("min", "max") and active_types(op.result.type)}
    return minmax | {array_root(op.operands[0]).id for op in LoadPlan(fn).final}


class LoadPlan:
    """Where the adjoint's replay of each load of kernel `fn` gets the value the forward
    read (the replay skips stores, so memory then holds what the launch left):
    - `forwarded`: load result id -> the value a store just before it, in the same thread
      and at the same index, put there;
    - `final`: loads of an element this thread wrote before (at the same index, and at no
      other index of that array) and never writes again (nor does a later loop iteration):
      memory after the launch holds what they read (the Tape keeps that state for them, see
      `array_final_reads`). A read of an element another thread may write stays refused.
      Also `final`: the loads of an array a loop writes one element per iteration (see
      `_written_once`) that read an element the loop wrote in an earlier iteration (or
      never writes), or that follow the loop: `prods[i + 1] = x[i] * prods[i]`; where the
      loop steps by 1 or -1 and the element read is known only at run time
      (`poses[parent[i]]`), `checked` maps the load's id to that record and the adjoint
      checks the order at run time (reverse.py); so too where the element written is read
      from an index array (`body_q[joint_child[i]] = body_q[joint_parent[i]] * X`);
    - `initial`: the other loads, before this thread writes their array: they read memory
      as it was before the launch (the Tape keeps that state for them);
      Also `final` (or `initial`, as the array's other loads are): any load of an array
      that the kernel writes and each thread owns a part of (`thread_owned_arrays`), where
      this thread writes the array neither before it on its path nor after it.
    - `unrecoverable`: the first other load after a write of its array, or None;
    - `mixed`: a `final` load of an array that `initial` loads read too, or None (the
      replay sees one state of an array's memory, not both)."""

    def __init__(self, fn: Function):
        self.forwarded: dict[int, Value] = {}
        self.final: list[Op] = []
        self.initial: list[Op] = []
        self.unrecoverable: Op | None = None
        self.checked: dict[int, tuple] = {}
        self._rewritten: set[int] = set()  # ids of loads whose array this thread writes later
        _loads_written_later(fn.body.ops, frozenset(), self._rewritten)
        self._once = _written_once(fn)
        self._owned = thread_owned_arrays(fn)
        self._stored = arrays_written([fn.body])
        self._loops_done: set[int] = set()  # ids of the loops walked so far
        either: list[Op] = []
        self._walk(fn.body.ops, {}, {}, either=either)
        finals = {array_key(op.operands[0]) for op in self.final}
        for op in either:
            (self.final if array_key(op.operands[0]) in finals else self.initial).append(op)
        before = {array_key(op.operands[0]) for op in self.initial}
        self.mixed = next((op for op in self.final if array_key(op.operands[0]) in before), None)

    def _walk(self, ops, written: dict, stored: dict, custom_grad=False, either=None):
        """`written`: root -> the index keys this thread wrote it at (None: some unknown).
        `custom_grad`: inside the body of a func with a `@func_grad`, which is not reversed:
        its replay only gives the func's results, from memory as the launch left it (Warp
        runs such a body again in the backward pass, reading memory as it is then)."""
        def forget(roots):
            for key in [k for k in stored if k[0] in roots]:
                del stored[key]

        for op in ops:
            if op.name in ("load", "store", "atomic") and is_local_array(op.operands[0]):
                continue  # (replayed exactly: see is_local_array)
            if op.name == "load":
                root = array_key(op.operands[0])
                # (the same places are the same element, however the index is written out)
                key = (root, value_key(op.operands[0]), _places(op.operands[1:]))
                if key in stored:
                    self.forwarded[op.result.id] = stored[key][0]
                elif root in self._once and self._reads_final(op, self._once[root]):
                    self.final.append(op)
                elif root in written:
                    place = (_element_key(op.operands[0]), _places(op.operands[1:]))
                    if not custom_grad and (id(op) in self._rewritten or root not in self._owned and (
                            place not in written[root]
                            or any(not _apart(other, place) for other in written[root] - {place}))):
                        self.unrecoverable = self.unrecoverable or op
                    else:
                        self.final.append(op)
                elif root in self._owned and root in self._stored and id(op) not in self._rewritten:
                    # nothing writes the element before or after: both states agree, so the
                    # load takes the array's other loads' state (see below; an array the kernel
                    # does not write keeps its state before the launch, which an alias may change)
                    either.append(op)
                else:
                    self.initial.append(op)
            elif op.name in ("store", "atomic"):
                root = array_key(op.operands[0])
                # (a store's and an atomic's operands alike: array, indices..., value)
                place = (_element_key(op.operands[0]), _places(op.operands[1:-1]))
                written.setdefault(root, set()).add(place)
                for key in [k for k, (_, at) in stored.items() if k[0] == root and not _apart(at, place)]:
                    del stored[key]  # (a store elsewhere in the array keeps what this thread knows)
                if op.name == "store":
                    stored[(root, value_key(op.operands[0]), place[1])] = (op.operands[-1], place)
            elif native_arrays(op):
                roots = {array_key(arr) for arr in native_arrays(op)}
                for root in roots:
                    written.setdefault(root, set()).add(None)
                forget(roots)
            elif op.regions:
                inner = arrays_written(op.regions)
                loop = op.name in ("for", "while")
                for region in op.regions:
                    region_stored = {k: v for k, v in stored.items() if not (loop and k[0] in inner)}
                    inside = {r: set(ks) for r, ks in written.items()}
                    for r in inner if loop else ():
                        inside.setdefault(r, set()).add(None)
                    inner_custom = custom_grad or op.name == "func_region" and \
                        op.attrs["func"].custom_grad is not None
                    self._walk(region.ops, inside, region_stored, inner_custom, either)
                for r in inner:
                    written.setdefault(r, set()).add(None)
                forget(inner)
                self._loops_done.add(id(op))

    def _reads_final(self, load: Op, once) -> bool:
        """Whether `load` of an array written once per element (`_written_once`) reads what
        the launch leaves there: it follows the loop, or reads in the loop an element that
        an earlier iteration wrote (or that the loop never writes)."""
        loop, store, at, offset, body_ops, _through = once
        if id(loop) in self._loops_done:
            return True
        if id(load) not in body_ops:
            return False  # (before the loop: the state before the launch)
        indices, written_at = load.operands[1:], store.operands[1:-1]
        if len(indices) != len(written_at) or any(
                k != at and value_key(i) != value_key(w) for k, (i, w) in enumerate(zip(indices, written_at))):
            return False
        read = None if offset is None else _iv_offset(indices[at], loop.regions[0].args[0])
        step = constant_value(loop.operands[2])
        if read is None and step in (1, -1) and not isinstance(step, bool):
            self.checked[id(load)] = once  # (the index is known at run time only)
            return True
        return read is not None and isinstance(step, int) and (offset - read) * step > 0


def _split_offset(v: Value) -> tuple:
    """(base, c) with `v` = base + c for a constant int c, peeling additions and
    subtractions of constants: `i + 2 - 1` is (i, 1), a constant 5 (None, 5), anything
    else (v, 0)."""
    c = 0
    while isinstance(v.owner, Op) and v.owner.name == "binary" and v.owner.attrs.get("op") in ("add", "sub"):
        x, y = v.owner.operands
        sign = 1 if v.owner.attrs["op"] == "add" else -1
        if _int_constant(y) is not None:
            c, v = c + sign * _int_constant(y), x
        elif sign == 1 and _int_constant(x) is not None:
            c, v = c + _int_constant(x), y
        else:
            break
    k = _int_constant(v)
    return (None, c + k) if k is not None else (v, c)


def _int_constant(v: Value) -> int | None:
    k = constant_value(v)
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _places(indices) -> tuple:
    """Index values as (base key, c) pairs (`_split_offset`, the base by `value_key`); two
    accesses with the same base and another c at some position reach different elements
    (`_apart`)."""
    return tuple((None if base is None else value_key(base), c)
                 for base, c in map(_split_offset, indices))


def _apart(a, b) -> bool:
    """Whether two written places (element key, `_places`) are certainly different elements:
    of the same array, some index has the same base and another constant offset."""
    if a is None or b is None or a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    return any(base == other_base and 0 < abs(c - other_c) < 2**31  # (int32 offsets do not wrap onto each other)
               for (base, c), (other_base, other_c) in zip(a[1], b[1]))


def _element_key(arr: Value):
    """`value_key` of the array whose elements an access reaches: a component view's (a part
    of each element, lang/array_parts.py) is its array's, since it writes those elements."""
    while isinstance(arr.owner, Op) and arr.owner.name == "component":
        arr = arr.owner.operands[0]
    return value_key(arr)


def _written_once(fn: Function) -> dict:
    """root (see `array_key`) -> (loop, store, k, c, ids of the loop's ops, through) for the
    arrays this thread writes in a `for` loop (in no other loop), at stores that all have the
    same indices (one store, or one in each branch of an `if`), whose other indices the loop
    does not change, and whose index at position k is either the loop's counter plus
    constant c (`through` None: each iteration writes its own element) or an entry of an
    index array (c None, `through` = (array, offset): see `_index_array_entry`; which
    iteration wrote an element, and whether two did, is known at run time only)."""
    writers: dict = {}

    def visit(ops, loops):
        for op in ops:
            for arr in ([op.operands[0]] if op.name in ("store", "atomic") else []) + native_arrays(op):
                if not is_local_array(arr):
                    writers.setdefault(array_key(arr), []).append((op, loops))
            for region in op.regions:
                visit(region.ops, loops + (op,) if op.name in ("for", "while") else loops)

    visit(fn.body.ops, ())
    once = {}
    for root, found in writers.items():
        store, loops = found[0]
        if any(other.name != "store" or other_loops != loops or _store_key(other) != _store_key(store)
               for other, other_loops in found):
            continue
        if len(loops) != 1 or loops[0].name != "for" or array_root(store.operands[0]) is not store.operands[0]:
            continue
        (loop,) = loops
        inside = list(walk(loop.regions[0]))
        body_ops = {id(o) for o in inside}
        defined = {r.id for o in inside for r in o.results}
        iv = loop.regions[0].args[0]
        at = [k for k, i in enumerate(store.operands[1:-1]) if i.id in defined or i is iv]
        if len(at) != 1:
            continue
        index = store.operands[1 + at[0]]
        if (offset := _iv_offset(index, iv)) is not None:
            once[root] = (loop, store, at[0], offset, body_ops, None)
        elif (through := _index_array_entry(index, loop, defined, writers)) is not None:
            once[root] = (loop, store, at[0], None, body_ops, through)
    return once


def _index_array_entry(index: Value, loop: Op, defined: set, writers: dict):
    """(array, c) when `index` is `array[iv + c]`, read in the loop's body (after a `continue`
    too: newton's articulation loop) from a 1-D array that the kernel does not write and that
    is the same in every iteration (made before the loop: `body_q[joint_child[i]] = ...`):
    the element each iteration writes, known at run time only (the adjoint scans the index
    array, see reverse.py)."""
    owner = index.owner
    body = loop.regions[0]
    if not (isinstance(owner, Op) and owner.name == "load" and len(owner.operands) == 2 and index.id in defined):
        return None
    arr = owner.operands[0]
    # (an array made in the loop, a view at the counter say, is another array each iteration;
    # SSA: one made before the loop depends on nothing the loop defines)
    if arr.id in defined or any(arr is a for a in body.args) or is_local_array(arr) or array_key(arr) in writers:
        return None
    c = _iv_offset(owner.operands[1], body.args[0])
    return None if c is None else (arr, c)


def _store_key(store: Op):
    """What identifies the element a store writes (its array and indices), across stores."""
    return value_key(store.operands[0]), tuple(value_key(i) for i in store.operands[1:-1])


def _iv_offset(index: Value, iv: Value) -> int | None:
    """c when `index` is the loop counter `iv` plus a constant c (`_split_offset`); else None."""
    base, c = _split_offset(index)
    return c if base is iv else None


def _loads_written_later(ops, later: frozenset, out: set):
    """Add to `out` the ids of the loads in `ops` whose array this thread writes after them
    (`later`: written after `ops`; a loop's writes follow every load in it)."""
    for op in reversed(ops):
        if op.name in ("load", "store", "atomic") and is_local_array(op.operands[0]):
            continue
        if op.name == "load":
            if array_key(op.operands[0]) in later:
                out.add(id(op))
        elif op.name in ("store", "atomic"):
            later = later | {array_key(op.operands[0])}
        elif op.regions:
            inner = frozenset(arrays_written(op.regions))
            after = later | inner if op.name in ("for", "while") else later
            for region in op.regions:
                _loads_written_later(region.ops, after, out)
            later = later | inner


def arrays_written(blocks) -> set:
    ops = [op for blk in blocks for op in walk(blk)]
    return {array_key(op.operands[0]) for op in ops if op.name in ("store", "atomic")} | \
        {array_key(arr) for op in ops for arr in native_arrays(op)}


def array_initial_reads(fn: Function) -> set:
    """Keys (see `array_key`) of the arrays whose contents before the launch the adjoint's
    replay reads (`LoadPlan.initial`)."""
    return {array_key(op.operands[0]) for op in LoadPlan(fn).initial}


def primal_arrays_read(adjoint: Function, n_primal: int) -> set:
    """Keys (parameter position, field path) of the primal arrays (the first `n_primal`
    parameters) whose contents adjoint kernel `adjoint` reads, after its dead code is gone."""
    position = {p.id: k for k, p in enumerate(adjoint.params[:n_primal])}
    keys = set()
    for op in walk(adjoint.body):
        arrays = [op.operands[0]] if op.name == "load" else native_arrays(op)
        for arr in arrays:
            pid, path = array_key(arr)
            if pid in position:
                keys.add(position[pid] if not path else (position[pid], path))
    return keys


def array_effects(fn: Function) -> tuple[set, set]:
    """(keys of the arrays read, keys of those written) by the kernel: see `array_key`. An
    array that may be stored twice counts as read too: it is not write-only, since the
    adjoint of the earlier store must not see the later one's (`write_only_params` keep
    the adjoint array as given, unconsumed)."""
    ops = list(walk(fn.body))
    reads = {array_key(op.operands[0]) for op in ops if op.name == "load"} | \
        {array_key(arr) for op in ops for arr in native_arrays(op)} | \
        {array_key(arr) for arr in getattr(fn, "forwarded_reads", ())}  # (ir/forward_if.py)
    again: set = set()
    _stored_again(fn.body, set(), again, False)
    return reads | again, arrays_written([fn.body])


def _stored_again(block, seen: set, again: set, in_loop: bool) -> set:
    """Keys of the arrays that plain stores may write twice along one path through `block`
    (two stores in sequence, or one in a loop; the branches of an `if` are separate paths),
    added to `again`; `seen`: those stored so far. Returns those stored at its end."""
    for op in block.ops:
        if op.name == "store" and not is_local_array(op.operands[0]):
            key = array_key(op.operands[0])
            if key in seen or in_loop:
                again.add(key)
            seen = seen | {key}
        elif op.name == "if":
            seen = set().union(*(_stored_again(r, set(seen), again, in_loop) for r in op.regions))
        else:
            loop = in_loop or op.name in ("for", "while")
            for region in op.regions:
                seen = seen | _stored_again(region, set(seen), again, loop)
    return seen


def indexed_by_thread(indices) -> bool:
    owners = [i.owner for i in indices]
    if not all(isinstance(o, Op) and o.name == "tid" for o in owners):
        return False
    if len(owners) == 1:
        return owners[0].attrs["dim"] == -1 or owners[0].attrs["of"] == 1
    return all(o.attrs["of"] == len(owners) and o.attrs["dim"] == d for d, o in enumerate(owners))


# Arrays the Tape does not know ---------------------------------------------------------------
# An array held in a struct read from memory (an array of structs), or made over raw memory
# (a mesh's points), differentiates into the gradient its descriptor carries; the Tape keeps
# no copy of its contents, so the adjoint's replay reads it as the launch left it.
_LINEAR = {"insert", "insert_dyn", "extract", "extract_dyn", "construct"}


def _needs_primal(v: Value, uses: dict, seen: set) -> bool:
    """Whether the adjoint may need the value of `v`: some use of it (or of what it flows
    into linearly: inserts, extracts, sums, stores) is not linear."""
    if v.id in seen:
        return False
    seen.add(v.id)
    for op in uses.get(v.id, ()):
        if op.name in ("store", "atomic") and op.operands[-1] is v and op.attrs.get("op", "add") in ("add", "sub"):
            continue
        linear = op.name in _LINEAR or (op.name == "binary" and op.attrs["op"] in ("add", "sub")) or \
            (op.name == "unary" and op.attrs["op"] == "neg")
        if op.name == "extract_dyn" and op.operands[0] is not v:
            linear = False  # (an index)
        if not linear or any(_needs_primal(r, uses, seen) for r in op.results):
            return True
    return False


def unkept_read(fn: Function) -> Op | None:
    """A load whose value the adjoint needs, from an array that the Tape does not keep (not
    rooted in a parameter) while the kernel writes such an array: the replay would read
    what the launch left there. None if there is none."""
    params = {p.id for p in fn.params}

    def unkept(arr):
        return array_origin(arr)[0].id not in params

    ops = list(walk(fn.body))
    if not any(op.name in ("store", "atomic") and unkept(op.operands[0]) for op in ops):
        return None
    uses: dict = {}
    for op in ops:
        for v in op.operands:
            uses.setdefault(v.id, []).append(op)
    for op in ops:
        if op.name == "load" and not op.attrs.get("constant") and unkept(op.operands[0]) \
                and _needs_primal(op.result, uses, set()):
            return op
    return None
