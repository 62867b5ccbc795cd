"""The parsed source of a Python function, and how its free names resolve."""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
import weakref

# Source lines of functions, read when they were decorated: the file may change or vanish
# before the first launch (code written to a temporary file, a notebook cell run again).
# Keyed by the identity of the code object (id -> (weak reference, lines)): two code objects
# compare equal when compiled from the same text, but one compiled after its file changed
# (a stale .pyc, a file rewritten) must read the file's text as it is now.
_LINES: dict = {}


def remember_source(pyfunc) -> None:
    """Read `pyfunc`'s source now, if it can be read (otherwise compiling it reports why).
    weft's own funcs (weft.math's, ...) are read when first compiled: the package's files do
    not change under a running program, and reading them all would slow `import weft`."""
    if (getattr(pyfunc, "__module__", None) or "").startswith("weft."):
        return
    try:
        source_lines(pyfunc)
    except (OSError, TypeError):
        pass


def source_lines(pyfunc):
    """(lines, first line number) of `pyfunc`'s source, as first read."""
    code = getattr(pyfunc, "__code__", None)
    entry = _LINES.get(id(code)) if code is not None else None
    if entry is not None and entry[0]() is code:
        return entry[1]
    found = (_block_by_indentation(pyfunc) if code is not None else None) or inspect.getsourcelines(pyfunc)
    if code is not None:
        key = id(code)
        _LINES[key] = (weakref.ref(code, lambda _, key=key: _LINES.pop(key, None)), found)
    return found


def _block_by_indentation(pyfunc):
    """(lines, first line number) of a `def` found by its indentation in the file's lines:
    what `inspect.getsourcelines` gives, without tokenizing (which costs about a millisecond
    a function, and five more for its first use in a process). None where this cannot tell
    (the block does not parse alone: a string or a signature back at the def's column), and
    the caller asks inspect."""
    code = pyfunc.__code__
    filename = code.co_filename
    linecache.checkcache(filename)  # (a file rewritten since it was cached is read again)
    lines = linecache.getlines(filename, getattr(pyfunc, "__globals__", None))
    start = code.co_firstlineno - 1  # (the first decorator's line)
    if not lines or not 0 <= start < len(lines):
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    k = start
    while k < len(lines) and not lines[k].lstrip().startswith(("def ", "async def ")):
        k += 1
    end, body_col = k + 1, None
    for j in range(k + 1, len(lines)):
        text = lines[j].strip()
        col = len(lines[j]) - len(lines[j].lstrip())
        if not text:
            continue
        if text.startswith("#"):  # (kept when indented as the body is, as inspect keeps it)
            if body_col is not None and col >= body_col:
                end = j + 1
            continue
        if col <= indent:
            break
        body_col = col if body_col is None else body_col
        end = j + 1
    block = lines[start:end]
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or tree.body[0].name != code.co_name:
        return None
    return block, code.co_firstlineno


_PARSED_FILES: dict = {}  # file name -> (its text, its module AST): lambdas are found in these


def lambda_body(fn) -> str:
    """The body of the lambda `fn`, as source text (`lambda a: a + 1.0` -> `a + 1.0`).
    The lambda is found in its file's AST by its line and parameters; where several on that
    line have them, by where the code's instructions come from (Python 3.11+)."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    if not lines:
        raise TypeError(f"cannot read the source of the lambda at {code.co_filename}:{code.co_firstlineno}")
    text = "".join(lines)
    cached = _PARSED_FILES.get(code.co_filename)
    if cached is None or cached[0] != text:
        try:
            cached = _PARSED_FILES[code.co_filename] = (text, ast.parse(text))
        except SyntaxError as e:
            raise TypeError(f"cannot parse {code.co_filename} to find a lambda: {e}") from None
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(cached[1]) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and [a.arg for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs)] == names]
    if len(found) > 1 and hasattr(code, "co_positions"):
        spans = [(p[0], p[2], p[1], p[3]) for p in code.co_positions()
                 if None not in p and (p[0], p[2]) < (p[1], p[3])]  # (not the empty span of RESUME)
        found = [n for n in found if all((n.lineno, n.col_offset) <= (a, c)
                                         and (b, d) <= (n.end_lineno, n.end_col_offset)
                                         for a, c, b, d in spans)] or found
        found.sort(key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))  # innermost first
    if not found:
        raise TypeError(f"cannot find the lambda of {code.co_filename}:{code.co_firstlineno} in its source")
    return ast.unparse(found[0].body)


class ParsedSource:
    """The AST of `pyfunc` with true file line numbers, plus its globals and closure.
    `transformers` (`ast.NodeTransformer`s) rewrite the function's AST first; `source`
    replaces the text read from the function's file."""

    def __init__(self, pyfunc, transformers=(), source: str | None = None):
        self.pyfunc = pyfunc
        try:
            self.file = inspect.getsourcefile(pyfunc) or "<unknown>"
            if source is None:
                lines, first = source_lines(pyfunc)
            else:
                lines, first = source.splitlines(keepends=True), pyfunc.__code__.co_firstlineno
        except (OSError, TypeError) as e:
            raise TypeError(f"cannot read the source of {pyfunc.__qualname__}: {e}") from None
        raw = "".join(lines)
        self.text = textwrap.dedent(raw)
        self.col_offset = len(lines[0]) - len(lines[0].lstrip()) if self.text != raw else 0
        module = ast.parse(self.text)
        ast.increment_lineno(module, first - 1)
        for transformer in transformers:
            module = ast.fix_missing_locations(transformer.visit(module))
        self.tree = module.body[0]
        if not isinstance(self.tree, ast.FunctionDef):
            raise TypeError(f"{pyfunc.__qualname__} is not a plain function definition")
        self.globals = pyfunc.__globals__
        code = pyfunc.__code__
        cells = pyfunc.__closure__ or ()
        self.closure = {}
        for name, cell in zip(code.co_freevars, cells):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:  # a cell not yet filled (defined later in the enclosing scope)
                pass

    def read_outside(self, name: str, stmt: ast.stmt) -> bool:
        """Whether the function reads local `name` anywhere outside the lines of `stmt`.
        (Asked at every `if` and loop of every inlined call: the lines where each name is
        read are collected in one walk of the tree.)"""
        reads = self.__dict__.get("_read_lines")
        if reads is None:
            reads = self._read_lines = {}
            for n in ast.walk(self.tree):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    reads.setdefault(n.id, []).append(n.lineno)
        return any(not stmt.lineno <= line <= stmt.end_lineno for line in reads.get(name, ()))

    def lookup(self, name: str):
        """(found, value) for a free name: closure, then globals, then Python builtins, then
        the weft module (Warp resolves `expect_eq(...)` without `wp.` in kernels)."""
        if name in self.closure:
            return True, self.closure[name]
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        import weft  # noqa: PLC0415 - as Warp: a bare name may be one of the module's (`expect_eq`)
        if not name.startswith("_") and hasattr(weft, name):
            return True, getattr(weft, name)
        return False, None
