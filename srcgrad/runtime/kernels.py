"""Kernels: the `@elementwise` functions `passes.fuse` generates, run as NumPy or as
compiled loops (with vectorizable tanh and exp).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import math
import sys
import textwrap
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import types
from numba.core.errors import NumbaError
from numba.extending import overload

from .broadcasting import _summed_axes, where


class elementwise:  # noqa: N801  (a decorator, named as one)
    """``@elementwise``: a generated kernel (`passes.fuse`), one elementwise expression,
    returned, or assigned to a name and returned with its sums to the shapes of other
    arguments (``x = a * b; return x, unbroadcast(x, like)``: a bias's gradient).

    Under numba the kernel is compiled with the code that calls it (numba fuses the
    expression's array operations into one loop; a last tanh or exp is vecmath's,
    `jit_kernel`). As Python it is NumPy, one pass per
    operation, until `loops` is set by a transform that may compile: then float64 arrays
    of one or two dimensions go to a loop compiled from the expression (`_loop_source`:
    a loop nest, which runs several times faster than numba's fused array expression
    when an operand is broadcast), one pass and no temporaries. Everything else (scalars,
    small arrays, other dtypes or ranks, comparisons) stays NumPy, whose results the
    loop might not match. The loop adds each entry into the sums as it goes.
    """

    MIN_SIZE = 512  # below this, the compiled call's overhead is more than it saves
    KEEP = 2        # result arrays kept for reuse, per shape

    def __init__(self, fun):
        self.__wrapped__ = fun
        self.__name__ = fun.__name__
        self.loops = False
        self._compiled: dict[tuple, object] = {}
        self._plans: dict[tuple, object] = {}  # argument types -> `_plan`
        self._kept: dict[tuple, list[np.ndarray]] = {}
        self._lock = threading.Lock()
        self._form: _Form | None = None

    def __call__(self, *args):
        if self.loops:
            types = tuple((a.shape, a.dtype) if type(a) is np.ndarray else type(a)
                          for a in args)
            plan = self._plans.get(types, _UNPLANNED)
            if plan is _UNPLANNED:
                plan = self._plans[types] = self._plan(args)
            if plan is not None:
                shape, key, (loop, last), sums = plan
                out = self._buffer(shape)
                try:
                    if sums is not None:
                        return _summing(loop, out, sums, args)
                    loop(out, *args)
                except (NumbaError, OverflowError):  # numba cannot type these values
                    self._compiled[key] = None
                    self._plans.clear()
                    return self.__wrapped__(*args)
                if last is not None:
                    last(out, out=out)
                return out
        return self.__wrapped__(*args)

    def _plan(self, args: tuple):
        """`(result shape, loop key, (loop, last), sums)` for arguments like these (the
        same shapes, dtypes and types), or None where they stay NumPy. `sums`: None, or
        the positions of the arguments the loop reads and, per result, the shape of a sum
        (None: the value itself, or a sum to its own shape)."""
        if self._form is None:
            self._form = _Form.of(self.__wrapped__)
        form = self._form
        values = args if form.reads is None else [args[k] for k in form.reads]
        shape = _loop_shape(values, self.MIN_SIZE)
        if shape is None:
            return None
        indices = tuple(_indices(a, shape) if type(a) is np.ndarray else None
                        for a in values)
        sums, patterns = None, ()
        if form.reads is not None:
            sums = (form.reads, tuple(_sum_shape(args[k], shape) if k is not None else None
                                      for k in form.outputs))
            if _UNPLANNED in sums[1]:
                return None
            patterns = tuple(_indices(args[k], shape) for k, s in zip(form.outputs, sums[1],
                                                                      strict=True)
                             if s is not None)
        key = (len(shape), indices, patterns)
        compiled = self._loop(*key)
        return None if compiled is None else (shape, key, compiled, sums)

    def _buffer(self, shape: tuple) -> np.ndarray:
        """An array for the result: one this kernel returned before if nothing refers to
        it any more (its reference count says so), else a new one, kept for next time.
        Reusing memory is the point: a new large array costs a page fault per 4 KB when
        the allocator gave the last one back to the system."""
        with self._lock:
            kept = self._kept.setdefault(shape, [])
            for k in range(len(kept)):
                if sys.getrefcount(kept[k]) == _UNSHARED:
                    return kept[k]
            out = np.empty(shape)
            if len(kept) < self.KEEP:
                kept.append(out)
            return out

    def _loop(self, ndim: int, indices: tuple, sums: tuple):
        key = (ndim, indices, sums)
        if key not in self._compiled:
            self._compiled[key] = _compile_loop(self.__wrapped__, self._form, ndim, indices,
                                                sums)
        return self._compiled[key]


@dataclass(frozen=True)
class _Form:
    """What a kernel computes, read from its source once: the function, its expression,
    and, for a kernel that returns sums, the positions of the parameters the expression
    reads and, per result, None for the value or the position of the parameter whose
    shape it is summed to (`unbroadcast(x, like)`)."""

    fn: ast.FunctionDef
    expr: ast.expr
    reads: tuple[int, ...] | None = None
    outputs: tuple[int | None, ...] = (None,)

    @staticmethod
    def of(fun) -> _Form:
        fn = ast.parse(textwrap.dedent(inspect.getsource(fun))).body[0]
        if len(fn.body) == 1:
            return _Form(fn, fn.body[0].value)
        (assign, ret), params = fn.body, [a.arg for a in fn.args.args]
        returned = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        read = {n.id for n in ast.walk(assign.value) if isinstance(n, ast.Name)}
        return _Form(fn, assign.value, tuple(k for k, p in enumerate(params) if p in read),
                     tuple(None if isinstance(r, ast.Name) else params.index(r.args[1].id)
                           for r in returned))


def _sum_shape(like, shape: tuple):
    """The shape of `unbroadcast(value, like)` for a value of `shape`, to add up in the
    loop; None where it is the value itself; `_UNPLANNED` where the loop does not serve
    (a scalar or 0-d `like`, or one the value does not broadcast from: NumPy then sums,
    or raises)."""
    if type(like) is not np.ndarray or not 0 < like.ndim <= len(shape):
        return _UNPLANNED
    try:
        _summed_axes(shape, like.shape)
    except ValueError:
        return _UNPLANNED
    return None if like.shape == shape else like.shape


def _summing(loop, out: np.ndarray, sums: tuple, args: tuple):
    """Run a kernel's loop that sums as it goes; its results, as the kernel returns them."""
    reads, shapes = sums
    totals = [np.zeros(s) for s in shapes if s is not None]
    loop(out, *totals, *[args[k] for k in reads])
    totals.reverse()
    results = tuple(out if s is None else totals.pop() for s in shapes)
    return results if len(results) > 1 else results[0]


def _indices(a: np.ndarray, shape: tuple) -> tuple[str, ...]:
    """How a loop over `shape` indexes `a`, which broadcasts to it: the loop's index, or
    0 along a broadcast axis of length 1 (``("i0", "0")`` for a (n, 1) column). The array
    is read in place, not through np.broadcast_to's strided view, so the loop vectorizes."""
    lead = len(shape) - a.ndim
    return tuple("0" if n == 1 and shape[lead + k] != 1 else f"i{lead + k}"
                 for k, n in enumerate(a.shape))


_LOOP_SCALARS = (float, int, np.float64)


_UNPLANNED = object()


def _unshared_count() -> int:
    kept = [np.empty(1)]
    return sys.getrefcount(kept[0])


_UNSHARED = _unshared_count()  # what `elementwise._buffer` sees of an array only it holds


def _loop_shape(args, min_size):
    """The shape of the result, if `args` are float64 arrays of 1 or 2 dimensions (not
    0-d) that broadcast together, and numbers, with `min_size` entries or more; else None."""
    shape = None
    same = True
    for a in args:
        if type(a) is np.ndarray:
            if a.dtype != np.float64 or a.ndim == 0:
                return None
            if shape is None:
                shape = a.shape
            elif a.shape != shape:
                same = False
        elif type(a) not in _LOOP_SCALARS:
            return None
    if shape is None:
        return None
    if not same:
        shape = np.broadcast_shapes(*[a.shape for a in args if type(a) is np.ndarray])
    if not 1 <= len(shape) <= 2 or math.prod(shape) < min_size:
        return None
    return shape


def _vectorized(ufunc, scalar):
    """A function meaning `ufunc` whose numba form computes float64 with `scalar`
    (its `in_loop` form), a loop over a contiguous array; other types go to the ufunc."""
    def call(x):
        return ufunc(x)

    @overload(call)
    def _call_typer(x):
        if isinstance(x, types.Array) and x.dtype == types.float64 and x.layout == "C":
            def each(x):
                out = np.empty_like(x)
                flat, values = out.reshape(out.size), x.reshape(x.size)
                for i in range(flat.size):
                    flat[i] = scalar(values[i])
                return out
            return each
        if x == types.float64:
            return lambda x: scalar(x)
        return lambda x: ufunc(x)
    call.__name__ = call.__qualname__ = ufunc.__name__
    return call


def _in_loop() -> dict[Any, Any]:
    """The ufuncs a kernel may end in that have an `in_loop` form, and that form."""
    from ..rules import records
    return {r.primal: r.in_loop for r in records() if r.in_loop is not None}


@functools.lru_cache(maxsize=1)
def _jit_numpy():
    """NumPy as kernels see it under numba."""
    module = type(np)("srcgrad.runtime.jit_numpy")
    module.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})
    module.__dict__.update({f.__name__: _vectorized(f, form) for f, form in _in_loop().items()})
    return module


def jit_kernel(fun):
    """`fun`, a kernel (`elementwise`), as numba compiles it: NumPy's tanh and exp, which
    numba computes with libm's scalar functions, as their vectorizable `in_loop` forms
    (a tanh RNN's gradient: 359 against 295 us, 64 entries a step). It sees its
    module's globals, but for those it reads: NumPy, and those ufuncs bound by name."""
    read = {name: fun.__globals__.get(name) for name in fun.__code__.co_names}
    in_loop, jit_numpy = _in_loop(), _jit_numpy()
    swapped = {name: jit_numpy if value is np else getattr(jit_numpy, value.__name__)
               for name, value in read.items()
               if value is np or any(value is f for f in in_loop)}
    if not swapped:
        return fun
    return type(fun)(fun.__code__, {**fun.__globals__, **swapped}, fun.__name__,
                     fun.__defaults__, fun.__closure__)


def _compile_loop(fun, form: _Form, ndim: int, indices: tuple, sums: tuple):
    """`fun`'s expression (`form`) as a numba-compiled loop nest writing into its first
    argument and adding into the next ones (`sums`: how each indexes the loop, as
    `_indices`), and the ufunc to apply last, in place (None: the expression does not end
    in one, or ends in one with an `in_loop` form, which the loop computes);
    None if a comparison's booleans are more than a `where`'s condition (NumPy's rules
    for them differ from numba's), or if a kernel that sums ends in a ufunc NumPy applies.
    """
    import numba

    from .. import codegen

    def resolve(node: ast.expr):  # what a name of the kernel denotes
        return eval(compile(ast.Expression(node), "<kernel>", "eval"), fun.__globals__)

    class Select(ast.NodeTransformer):  # where(c, x, y) -> x if c else y, as np.where
        def visit_Call(self, node):
            self.generic_visit(node)
            if len(node.args) == 3 and resolve(node.func) in (np.where, where):
                return ast.IfExp(test=node.args[0], body=node.args[1], orelse=node.args[2])
            return node

    expr, last = form.expr, None
    if isinstance(expr, ast.Call) and len(expr.args) == 1:  # np.tanh(...): see passes.fuse
        last, expr = resolve(expr.func), expr.args[0]
    expr = Select().visit(copy.deepcopy(expr))
    names = dict(fun.__globals__)
    if (vectorizable := _in_loop().get(last)) is not None:  # the loop calls it
        names["__last"] = vectorizable
        expr, last = ast.Call(ast.Name("__last", ast.Load()), [expr], []), None
    if form.reads is not None and last is not None:
        return None
    params = [a.arg for a in form.fn.args.args]
    if form.reads is not None:
        params = [params[k] for k in form.reads]
    # a vectorizable transcendental is a long chain of dependent operations: two halves of
    # each row at a time give the core independent work to overlap (256 x 256 tanh:
    # 100 us against 120); memory-bound loops are faster as one stream
    text = _loop_source(params, expr, ndim, indices, sums, halves="__last" in names)
    if text is None:
        return None
    loads = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    module = codegen.load(text, {k: v for k, v in names.items() if k in loads},
                          f"{fun.__name__}_loop{ndim}", "loop")
    return numba.njit(cache=True, error_model="numpy")(module.loop), last


def _loop_source(params: list[str], expr: ast.expr, ndim: int, indices: tuple,
                 sums: tuple = (), halves: bool = False) -> str | None:
    r"""The loop nest computing `expr` over the kernel parameters `params`, for a result
    of `ndim` dimensions; `indices` gives each array parameter's (`_indices`), None for a
    number; `sums`, the index of each sum the loop adds each entry into; `halves`: the
    innermost loop computes an entry of each half of its range per step. The loop's own
    names start with two underscores: the kernel's are the user's.

    >>> expr = ast.parse("a * b + c", mode="eval").body
    >>> print(_loop_source(["a", "b", "c"], expr, 2, (("i0", "i1"), None, ("i1",))))
    def loop(__out, a, b, c):
        for __i0 in range(__out.shape[0]):
            for __i1 in range(__out.shape[1]):
                __out[__i0, __i1] = a[__i0, __i1] * b + c[__i1]
    <BLANKLINE>
    >>> print(_loop_source(["a"], ast.parse("2.0 * a", mode="eval").body, 2,
    ...                    (("i0", "i1"),), (("i1",),)))
    def loop(__out, __sum0, a):
        for __i0 in range(__out.shape[0]):
            for __i1 in range(__out.shape[1]):
                __value = 2.0 * a[__i0, __i1]
                __out[__i0, __i1] = __value
                __sum0[__i1] += __value
    <BLANKLINE>
    >>> print(_loop_source(["a"], ast.parse("f(a)", mode="eval").body, 1, (("i0",),),
    ...                    halves=True))
    def loop(__out, a):
        __half = __out.shape[0] // 2
        for __i0 in range(__half):
            __out[__i0] = f(a[__i0])
            __j = __i0 + __half
            __out[__j] = f(a[__j])
        for __i0 in range(2 * __half, __out.shape[0]):
            __out[__i0] = f(a[__i0])
    <BLANKLINE>
    """
    tests = {id(n.test) for n in ast.walk(expr) if isinstance(n, ast.IfExp)}
    if any(isinstance(n, ast.Compare) and id(n) not in tests for n in ast.walk(expr)):
        return None  # a boolean result, or arithmetic on booleans: NumPy's rules differ
    last = ndim - 1
    totals = [f"__sum{k}" for k in range(len(sums))]

    def step(inner: str) -> list[str]:  # the body, `inner` the innermost index
        def at(ix: tuple) -> str:
            return ", ".join(i if i == "0" else inner if i == f"i{last}" else f"__{i}"
                             for i in ix)
        arrays = {p: at(ix) for p, ix in zip(params, indices, strict=True)
                  if ix is not None}

        class Index(ast.NodeTransformer):
            def visit_Name(self, node):
                return ast.parse(f"{node.id}[{arrays[node.id]}]", mode="eval").body \
                    if node.id in arrays else node
        body = ast.unparse(Index().visit(copy.deepcopy(expr)))
        index = at(tuple(f"i{k}" for k in range(ndim)))
        if not sums:
            return [f"__out[{index}] = {body}"]
        return [f"__value = {body}", f"__out[{index}] = __value",
                *[f"{t}[{at(ix)}] += __value" for t, ix in zip(totals, sums, strict=True)]]

    lines = [f"def loop({', '.join(['__out', *totals, *params])}):"]
    if halves:
        lines.append(f"    __half = __out.shape[{last}] // 2")
    for k in range(last):
        lines.append("    " * (k + 1) + f"for __i{k} in range(__out.shape[{k}]):")
    pad, inner = "    " * (last + 1), f"__i{last}"
    if not halves:
        lines.append(f"{pad}for {inner} in range(__out.shape[{last}]):")
        lines += [f"{pad}    {s}" for s in step(inner)]
    else:
        lines.append(f"{pad}for {inner} in range(__half):")
        lines += [f"{pad}    {s}" for s in step(inner)]
        lines.append(f"{pad}    __j = {inner} + __half")
        lines += [f"{pad}    {s}" for s in step("__j")]
        lines.append(f"{pad}for {inner} in range(2 * __half, __out.shape[{last}]):")
        lines += [f"{pad}    {s}" for s in step(inner)]
    return "\n".join(lines) + "\n"
