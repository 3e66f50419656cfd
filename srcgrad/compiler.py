"""compiler: the pipeline, in order, from a user function to a generated module.

    parse -> positional (the entry's *args, keyword-only) -> annotate -> pytrees (container
    `wrt`) -> lift_closures -> reject_unsupported -> unroll (static, unroll=) -> checkpoint
    (checkpoint=) -> normalize -> activity/tape/reverse (or forward) -> optimize  [the IR]
    -> batch -> join -> scalarise -> fuse -> codegen

One generated module holds the requested entry points and the gradients of every user
function they call (each differentiated on demand, for the argument positions that are
active at the call). `SRCGRAD_DEBUG=1` prints the normalized function and the generated
module to stderr as they are made.

The pipeline runs one way. Each generated function is kept as it is before the lowering
passes (`batch`, `join`, `fuse`): `Generated.ir`, with the user's function it came from
(`Origin`). A transform of a transform (`hvp`, `grad(grad(f))`) parses the generated
entry point, and `parse` returns a copy of that IR (`Generated.register`), located at
the user's lines its comments cite: no generated text is read back, and second-order
code cites the user's file and lines as first-order code does.
"""

from __future__ import annotations

import copy
import dataclasses
import dis
import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from . import builder as b
from .analysis.aliasing import HelperWrites
from .codegen import to_source
from .errors import RecursiveFunction, SrcgradError, WrtError
from .frontend.parse import Env, Parsed, nested_entry, parse, positional, register_generated
from .naming import Namer, names_in
from .passes.annotate import annotate, hook_names
from .passes.base import GeneratedFunction, Namespace
from .passes.batch import batch
from .passes.check import check, side_call
from .passes.checkpoint import checkpoint
from .passes.closures import lift_closures
from .passes.forward import Forwarded, forward
from .passes.fuse import fuse
from .passes.join import join
from .passes.normalize import normalize
from .passes.optimize import optimize, unvalued
from .passes.pytrees import flatten_dicts, flatten_params, spellings
from .passes.reject import reject_unsupported
from .passes.reshapes import reshapes
from .passes.reverse import Reversed, reverse
from .passes.scalarise import scalarise
from .passes.unroll import unroll
from .rules import fact, lookup
from .runtime import put_flat, seed, tree_vdot, unit, zeros_like


@dataclass(frozen=True)
class Origin:
    """The user's function a generated function was made from: its file, the lines of
    its source (by line number) and the line of its `def`."""

    filename: str
    lines: dict[int, str]
    lineno: int

    @classmethod
    def of(cls, parsed: Parsed) -> Origin:
        return cls(parsed.filename, parsed.lines, parsed.tree.lineno)


@dataclass
class Generated:
    """A generated module: its source, globals, and entry-point names; and the
    differentiable form of its functions (`ir`), which higher-order transforms read."""

    source: str
    namespace: Namespace
    entries: dict[str, str]          # role ("grad", "forward", "backward") -> function name
    result_line: tuple[str, int] = ("", 0)
    functions: list[str] = field(default_factory=list)
    has_loops: bool = False
    custom: bool = False             # a gradient the user wrote is in it (see `Reversed`)
    kernels: list[str] = field(default_factory=list)  # `@elementwise` ones (passes.fuse)
    # each function as it was before the lowering passes (batch, join, fuse), and its origin
    ir: dict[str, gast.FunctionDef] = field(default_factory=dict)
    origins: dict[str, Origin] = field(default_factory=dict)
    reporting: bool = False          # it prints, warns or logs (so no call runs twice)

    def register(self, module: Any) -> None:
        """Let `parse` read the functions of `module` (this source, loaded) as their IR."""
        for name in self.ir:
            register_generated(getattr(module, name), functools.partial(self.parsed, name))

    def parsed(self, name: str, fun: Any) -> Parsed:
        """Function `name` (loaded as `fun`) as `parse` gives a user function: a copy of
        its IR, whose statements carry the user's lines that its comments cite."""
        origin = self.origins[name]
        tree = _unshared(self.ir[name])
        tree.body = _cited(tree.body, origin.lineno)
        tree.lineno = origin.lineno
        # the module's own functions from its globals; the rest as bound (not the forms
        # `backend` gives them there: compiled helpers, `loops=True` partials)
        env = Env({**fun.__globals__, **self.namespace.globals()})
        return Parsed(fun, tree, origin.filename, origin.lines, env)


def _debug(stage: str, tree: gast.AST) -> None:
    if os.environ.get("SRCGRAD_DEBUG"):
        print(f"--- srcgrad: after {stage} ---\n{to_source(tree)}", file=sys.stderr)


class _Module:
    def __init__(self, unroll_loops: bool = False, trees: tuple = (None, {}),
                 checkpoint: bool | int | None = None, complex_values: bool = False):
        self.unroll_loops = unroll_loops
        self.complex_values = complex_values   # for complex arguments (`passes.reverse`)
        self.checkpoint = checkpoint   # the function differentiated's loops in segments
        self.trees = trees   # (fun, {parameter: structure}): its containers flattened
        self.ns = Namespace()
        self.functions: list[gast.FunctionDef] = []
        # (fun, positions, kind, constants) -> generated function name
        self.callees: dict[tuple[Any, tuple[int, ...], str, tuple], str] = {}
        self.stack: list[tuple[Any, tuple]] = []   # (fun, constants) being generated
        self.custom = False
        self.origins: dict[str, Origin] = {}

    def add(self, fn: gast.FunctionDef, parsed: Parsed) -> None:
        """Add generated function `fn`, made from `parsed`, to the module."""
        self.functions.append(fn)
        self.origins[fn.name] = Origin.of(parsed)

    def function_name(self, base: str) -> str:
        return self.ns.bind(base, GeneratedFunction())

    def prepare(self, fun: Any, wrt: list[str] | list[int],
                constants: dict[str, Any] | None = None, forward_mode: bool = False
                ) -> tuple[Parsed, Reversed | Forwarded, Namer]:
        """parse -> positional -> annotate -> pytrees -> closures -> reject -> unroll ->
        checkpoint (the function differentiated, reverse mode) -> normalize -> reverse (or
        forward)."""
        parsed = parse(fun)
        if not self.stack:   # the function differentiated, its arguments bound by the api
            parsed = dataclasses.replace(parsed, tree=positional(parsed.tree))
        parsed = annotate(parsed)
        spelled: dict[str, str] = {}   # flat names as the user spells them, for messages
        if self.trees[1] and fun is self.trees[0] and not self.stack:
            parsed = dataclasses.replace(parsed, tree=flatten_params(
                parsed.tree, self.trees[1], parsed.filename, parsed.env))
            spelled = spellings(self.trees[1])
        tree, entries = flatten_dicts(parsed.tree, parsed.filename, parsed.env)
        parsed, spelled = dataclasses.replace(parsed, tree=tree), spelled | entries
        parsed = lift_closures(parsed)
        if wrt and getattr(lookup(fun), "origin", None):
            parsed = _through_adjoint(parsed)
        tree = reject_unsupported(parsed.tree, parsed.filename)
        if constants or self.unroll_loops:
            tree = unroll(tree, constants or {}, self.unroll_loops, parsed.filename)
            _debug("unroll", tree)
        if self.checkpoint and not self.stack and not forward_mode:
            parsed = checkpoint(parsed, tree, self.checkpoint)
            tree = parsed.tree
            _debug("checkpoint", tree)
        params = [a.id for a in tree.args.args]
        wrt_names = [params[w] if isinstance(w, int) else w for w in wrt]
        for name in wrt_names:
            if name not in params:  # (forward mode: the api allows parameters only)
                _check_intermediate(tree, name, parsed)
        namer = Namer(names_in(tree) - hook_names(tree) | set(self.ns.entries))
        # the function differentiated copies the arguments it writes into; a helper it
        # calls must not (the caller sees its writes), so writing into one is refused
        tree = normalize(tree, parsed.env, namer, parsed.filename, copy_args=not self.stack,
                         spelled=spelled)
        _debug("normalize", tree)
        self.stack.append((parsed.fun, tuple((constants or {}).items())))
        try:
            if forward_mode:
                out = forward(parsed, tree, wrt_names, namer, self.ns, self.jvp_callee,
                              self.primal)
            else:
                check(parsed, tree, wrt_names, spelled)
                out = reverse(parsed, tree, wrt_names, namer, self.ns, self.callee,
                              self.primal, self.complex_values)
                self.custom |= out.custom
        finally:
            self.stack.pop()
        return parsed, out, namer

    def primal(self, fun: Any, at: gast.Call | None = None,
               constants: dict[str, Any] | None = None) -> str:
        """Name of a generated copy of user function `fun` (its forward code, no adjoint)
        as call `at` calls it (see `_specialize`), or for these `constants`.

        A function srcgrad cannot parse is called as it is (compiled with numba if
        possible), which is fine as long as no derivative flows through it; not one that
        writes into the arrays it is passed (`HelperWrites`)."""
        if constants is None:
            constants = _specialize(fun, at)
        key = (fun, (), "primal", tuple(constants.items()))
        if key in self.callees:
            return self.callees[key]
        if (entry := nested_entry(fun)) is not None:   # a transform: its generated code
            self.callees[key] = self.ns.bind(entry.__name__, entry, jit=True)
            return self.callees[key]
        if (fun, key[3]) in self.stack or len(self.stack) > MAX_DEPTH:
            return self.ns.bind(fun.__name__, fun, jit=True)  # reported by `callee` if active
        try:
            parsed, rev, _ = self.prepare(fun, [], constants)
        except HelperWrites:
            raise   # called as it is, it would change its caller's arrays unseen
        except SrcgradError:
            if getattr(fun, "srcgrad_segment", False):   # (passes.checkpoint) no code to run
                raise
            self.callees[key] = self.ns.bind(fun.__name__, fun, jit=True)
            return self.callees[key]
        name = self.callees[key] = self.function_name(parsed.tree.name + _suffix(constants))
        params = [a.id for a in parsed.tree.args.args]
        doc = f"{parsed.tree.name} ({_where(parsed)}), as the generated code calls it."
        copy_fn = b.function(name, params, rev.forward + [b.ret(rev.result)], doc)
        copy_fn.args.defaults = list(parsed.tree.args.defaults)  # calls may leave them out
        self.add(copy_fn, parsed)
        return name

    def callee(self, fun: Any, positions: tuple[int, ...], at: gast.AST,
               kind: str = "vjp") -> str:
        """Name of `fun_vjp(*args, dout) -> grads of args[positions]` (or, for kind "jvp",
        `fun_jvp(*args, *tangents of args[positions]) -> (value, tangent)`), made once
        for each set of constants the call `at` specialises `fun` on (`_specialize`)."""
        constants = _specialize(fun, getattr(at, "value", None))
        key = (fun, positions, kind, tuple(constants.items()))
        if key in self.callees:
            return self.callees[key]
        if (entry := nested_entry(fun)) is not None:   # a transform: through its code
            self.callees[key] = self.callee(entry, positions, at, "jvp") if kind == "jvp" \
                else self.vjp_by_columns(entry, fun, positions, at)
            return self.callees[key]
        if (fun, key[3]) in self.stack or len(self.stack) > MAX_DEPTH:
            caller = self.stack[-1][0]
            deep = f" more than {MAX_DEPTH} levels deep" if len(self.stack) > MAX_DEPTH else ""
            raise RecursiveFunction(
                f"{fun.__name__} calls itself{deep} (directly or through other functions); "
                f"recursion can be differentiated only where int arguments that are "
                f"constants set its depth (a function calling itself with n - 1, n a "
                f"static argument or a literal at the first call)",
                filename=caller.__code__.co_filename, lineno=getattr(at, "lineno", None))
        parsed, out, namer = self.prepare(fun, list(positions), constants,
                                          forward_mode=kind == "jvp")
        name = self.callees[key] = self.function_name(
            f"{parsed.tree.name}{_suffix(constants)}_{kind}")
        params = [a.id for a in parsed.tree.args.args]
        of = f"{parsed.tree.name} ({_where(parsed)})"
        along = ", ".join(params[i] for i in positions)
        if kind == "jvp":
            doc = f"Value and tangent of {of} along tangents of {along}."
            params, body = params + out.tangents, out.body + [
                b.ret(b.tuple_([out.result, out.tangent]))]
        else:
            doc = f"Vector-Jacobian product of {of} for {along}."
            params, body = params + [out.seed or namer.fresh("dout")], out.forward + \
                out.adjoint + [b.ret(_pack(out.grads, many=len(positions) > 1))]
        self.add(b.function(name, params, body, doc), parsed)
        return name

    def vjp_by_columns(self, entry: Any, fun: Any, positions: tuple[int, ...],
                       at: gast.AST) -> str:
        """`entry_vjp(*args, dout) -> grads of args[positions]` for generated code
        (a gradient called inside the function differentiated): forward mode over it,
        one pass per entry of each argument (as `generate_grad_of`), each giving one
        entry of the gradient, <dout, d entry(...)>."""
        jvp = self.jvp_callee(entry, positions, at)
        params = list(inspect.signature(entry).parameters)
        namer = Namer(set(params) | set(self.ns.entries) | {f.name for f in self.functions})
        bind = {f.__name__: self.ns.bind(f.__name__, f, avoid=namer.taken)
                for f in (zeros_like, unit, put_flat, tree_vdot)}
        size = self.ns.bind("np", np, avoid=namer.taken)
        self.ns.bind("range", range)
        dout, tangent, k = namer.fresh("dout"), namer.fresh("tangent"), namer.fresh("k")
        grads = [namer.adjoint(params[i]) for i in positions]
        body: list[gast.stmt] = []
        for i, g in zip(positions, grads, strict=True):
            w = params[i]
            tangents = [b.call(b.name(bind["unit"] if j == i else bind["zeros_like"]),
                               b.name(params[j]), *([b.name(k)] if j == i else []))
                        for j in positions]
            loop = [b.assign(b.tuple_([b.name("_", store=True),
                                       b.name(tangent, store=True)], store=True),
                             b.call(b.name(jvp), *[b.name(p) for p in params], *tangents)),
                    b.assign(g, b.call(b.name(bind["put_flat"]), b.name(g), b.name(k),
                                       b.call(b.name(bind["tree_vdot"]), b.name(dout),
                                              b.name(tangent))))]
            body += [b.comment(f"d/d{w} of <{dout}, {entry.__name__}(...)>, one entry of "
                               f"{w} at a time"),
                     b.assign(g, b.call(b.name(bind["zeros_like"]), b.name(w))),
                     b.make(gast.For, target=b.name(k, store=True),
                            iter=b.call(b.name("range"),
                                        b.call(b.dotted(f"{size}.size"), b.name(w))),
                            body=loop, orelse=[])]
        body.append(b.ret(_pack(grads, many=len(positions) > 1)))
        name = self.function_name(f"{entry.__name__}_vjp")
        doc = (f"Vector-Jacobian product of {fun!r} for "
               f"{', '.join(params[i] for i in positions)}, by forward mode over its code.")
        self.add(b.function(name, params + [dout], body, doc), parse(entry))
        return name

    def jvp_callee(self, fun: Any, positions: tuple[int, ...], at: gast.AST) -> str:
        return self.callee(fun, positions, at, "jvp")


def generate_jvp(fun: Any, wrt: list[str], many: bool = False,
                 constants: dict[str, Any] | None = None,
                 unroll_loops: bool = False,
                 only: tuple[int, ...] | None = None, trees: dict | None = None) -> Generated:
    """Generate `f_jvp(*params, *tangents) -> (value, tangent)` for parameters `wrt`;
    with `only`, `f_jvp(*params, *tangents) -> tangent[only]` (`hvp`: the tangent of the
    gradient that a `grad` entry returns, not of its value), and no code for the rest.
    `trees`: parameters that are containers, by structure (`passes.pytrees`)."""
    m = _Module(unroll_loops, (fun, trees or {}))
    parsed, fwd, namer = m.prepare(fun, wrt, constants or {}, forward_mode=True)
    fname = parsed.tree.name
    params = [a.id for a in parsed.tree.args.args]
    name = m.function_name(f"{fname}_jvp")
    tangents = f"along the tangents {', '.join(fwd.tangents)} of {', '.join(wrt)}"
    if only is None:
        body = fwd.body + [b.ret(b.tuple_([fwd.result, fwd.tangent]))]
        doc = f"Value of {fname} ({_where(parsed)}) and its derivative {tangents}."
    else:
        body = fwd.body + [b.ret(_select(fwd.body, fwd.tangent, only))]
        entry = "".join(f"[{k}]" for k in only)
        doc = f"Derivative of {fname}(...){entry} ({_where(parsed)}) {tangents}."
    main = [b.function(name, params + fwd.tangents, body, doc)]
    return _assemble(main, m, {"jvp": name}, parsed)


def generate_grad_of(entry: Any, projection: tuple[int, ...], label: str, wrt: list[str],
                     many: bool = False) -> Generated:
    """`grad` of a transform whose generated entry is `entry` (its value: `projection`
    of what `entry` returns): forward mode over the generated code, one pass per entry of
    each `wrt` parameter, `f_grad_grad(*params) -> (value, grads)`."""
    m = _Module()
    parsed = parse(entry)
    params = [a.id for a in parsed.tree.args.args]
    positions = tuple(params.index(w) for w in wrt)
    jvp = m.jvp_callee(entry, positions, parsed.tree)
    namer = Namer(set(params) | set(m.ns.entries) | {f.name for f in m.functions})
    bind = {f.__name__: m.ns.bind(f.__name__, f, avoid=namer.taken)
            for f in (zeros_like, unit, put_flat)}
    size = m.ns.bind("np", np, avoid=namer.taken)
    out, dout, k = namer.fresh("out"), namer.fresh("dout"), namer.fresh("k")
    grads = [namer.adjoint(w) for w in wrt]
    body: list[gast.stmt] = []
    for w, g in zip(wrt, grads, strict=True):
        tangents = [b.call(b.name(bind["unit"] if v == w else bind["zeros_like"]), b.name(v),
                           *([b.name(k)] if v == w else [])) for v in wrt]
        loop = [b.assign(b.tuple_([b.name(out, store=True), b.name(dout, store=True)],
                                  store=True),
                         b.call(b.name(jvp), *[b.name(p) for p in params], *tangents)),
                b.assign(g, b.call(b.name(bind["put_flat"]), b.name(g), b.name(k),
                                   _project(b.name(dout), projection)))]
        body += [b.comment(f"d({label}) / d{w}, one entry of {w} at a time"),
                 b.assign(g, b.call(b.name(bind["zeros_like"]), b.name(w))),
                 b.make(gast.For, target=b.name(k, store=True),
                        iter=b.call(b.name("range"), b.call(b.dotted(f"{size}.size"), b.name(w))),
                        body=loop, orelse=[])]
    m.ns.bind("range", range)
    name = m.function_name(f"{parsed.tree.name}_grad")
    body.append(b.ret(b.tuple_([_project(b.name(out), projection), _pack(grads, many)])))
    doc = f"Value and gradient of {label} ({_where(parsed)}) with respect to {', '.join(wrt)}."
    return _assemble([b.function(name, params, body, doc)], m, {"grad": name}, parsed)


# How deep recursion specialised on constants (`_specialize`) may go.
MAX_DEPTH = 64


def calls_itself(fun: Any) -> bool:
    """Whether `fun` reads itself by its global name (recursion); an attribute of the same
    name (`np.linalg.inv` in a function `inv`) is not it."""
    code = getattr(fun, "__code__", None)
    if code is None or fun.__name__ not in code.co_names \
            or getattr(fun, "__globals__", {}).get(fun.__name__) is not fun:
        return False
    return any(i.opname == "LOAD_GLOBAL" and i.argval == fun.__name__
               for i in dis.get_instructions(code))


def _specialize(fun: Any, call: gast.AST | None) -> dict[str, Any]:
    """The parameters of `fun` that `call` passes an int or bool literal, with their
    values, where `fun` calls itself: recursion whose depth such arguments set (a
    determinant by minors, `det(minor, n - 1)` down to `n == 1`) is generated one function
    per depth, as a static loop bound is unrolled. Other calls are not specialised."""
    if not isinstance(call, gast.Call) or not calls_itself(fun):
        return {}
    params = list(inspect.signature(fun).parameters)
    return {params[k]: a.value for k, a in enumerate(call.args[:len(params)])
            if isinstance(a, gast.Constant) and type(a.value) in (int, bool)}


def _suffix(constants: dict[str, Any]) -> str:
    return "".join(f"_{name}{int(value)}" for name, value in constants.items())


def _project(node: gast.AST, projection: tuple[int, ...]) -> gast.AST:
    for k in projection:
        node = b.subscript(node, b.const(k))
    return node


def _select(body: list[gast.stmt], node: gast.AST, projection: tuple[int, ...]) -> gast.AST:
    """`_project(node, projection)`, read off the tuples `body` builds where it can (so
    that the other entries are dead code)."""
    built = {s.targets[0].id: s.value for s in body
             if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)}
    for depth, k in enumerate(projection):
        if isinstance(node, gast.Name) and isinstance(built.get(node.id), gast.Tuple):
            node = built[node.id]
        if not isinstance(node, gast.Tuple):
            return _project(node, projection[depth:])
        node = node.elts[k]
    return node


def _assemble(main: list[gast.FunctionDef], m: _Module, entries: dict[str, str],
              parsed: Parsed) -> Generated:
    """The module of entry points `main` (made from `parsed`) and the functions `m`
    made for them: optimized, kept as IR, then lowered (batched products, joint calls,
    kernels, reshapes of any layout) to source."""
    optimized = [optimize(f, m.ns) for f in main + m.functions]
    ir = {f.name: copy.deepcopy(f) for f in optimized}
    origins = {**{f.name: Origin.of(parsed) for f in main}, **m.origins}
    functions, kernels = fuse(scalarise([join(batch(unvalued(f, m.ns), m.ns), m.ns)
                                         for f in optimized], m.ns), m.ns)
    functions = [reshapes(f, m.ns) for f in functions]
    module = b.make(gast.Module, body=functions)
    source = to_source(module)
    _debug("generate", module)
    last = parsed.tree.body[-1]
    has_loops = any(isinstance(n, (gast.For, gast.While)) for n in gast.walk(module))
    reporting = any(reports(n, m.ns) for n in gast.walk(module) if isinstance(n, gast.stmt))
    return Generated(source, m.ns, entries, (parsed.filename, getattr(last, "lineno", 0)),
                     [f.name for f in functions], has_loops, m.custom, kernels, ir, origins,
                     reporting)


_CITATION = re.compile(r"(?:grad of )?line (\d+):")


def _cited(stmts: list[gast.stmt], lineno: int) -> list[gast.stmt]:
    """`stmts` without their comments, each located at the user's line that the comment
    in force cites (`# line 4: ...`, `# grad of line 4: ...`; `lineno` before any), so
    that code made from them cites it too. Changes the statements in place."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and \
                isinstance(stmt.value.value, str) and stmt.value.value.startswith(b.COMMENT_MARK):
            cited = _CITATION.match(stmt.value.value[len(b.COMMENT_MARK):])
            lineno = int(cited.group(1)) if cited else lineno
            continue
        blocks = [f for f in ("body", "orelse") if isinstance(getattr(stmt, f, None), list)]
        for node in gast.walk(stmt) if not blocks else [stmt] + [
                n for f in ("test", "iter", "target") if hasattr(stmt, f)
                for n in gast.walk(getattr(stmt, f))]:
            if "lineno" in node._attributes:
                node.lineno, node.end_lineno = lineno, None
                node.col_offset = node.end_col_offset = None
        for f in blocks:
            setattr(stmt, f, _cited(getattr(stmt, f), lineno))
        out.append(stmt)
    return out


def _unshared(node: gast.AST) -> gast.AST:
    """A copy of `node` that shares no node, within it either (`copy.deepcopy` keeps a
    node that occurs twice one node)."""
    new = copy.copy(node)
    for name, value in gast.iter_fields(node):
        if isinstance(value, list):
            setattr(new, name, [_unshared(v) if isinstance(v, gast.AST) else v for v in value])
        elif isinstance(value, gast.AST):
            setattr(new, name, _unshared(value))
    return new


def _makes_complex(stmts: list[gast.stmt], ns: Namespace) -> bool:
    """Whether forward code names a complex constant or calls a function with a complex
    result (np.fft.fft): its full reduction may be complex, which `seed` refuses."""
    return any(isinstance(n, gast.Constant) and isinstance(n.value, complex)
               or isinstance(n, gast.Call) and fact(ns.resolve(n.func), "complex_result")
               for s in stmts for n in gast.walk(s))


def generate(fun: Any, wrt: list[str], kinds: tuple[str, ...] = ("grad",),
             many: bool = False, constants: dict[str, Any] | None = None,
             unroll_loops: bool = False, value: bool = True,
             trees: dict | None = None, checkpoint: bool | int | None = None,
             complex_values: bool = False) -> Generated:
    """Generate the module for `fun` differentiated with respect to parameters `wrt`.

    kinds: "grad" gives `f_grad(*params) -> (value, grads)` (`-> grads` without
    `value`: then nothing computes the value that the gradient does not need); "vjp" gives
    `f_forward(*params) -> (value, saved)` and `f_backward(*saved, dout) -> grads`.
    Gradients come as a tuple if `many`, else as the one gradient. `trees`: parameters
    that are containers, by structure; `wrt` names their leaves (`passes.pytrees`).
    `checkpoint`: run `fun`'s outermost loops in segments (`passes.checkpoint`).
    `complex_values`: for complex arguments (their real operands' cotangents made real).
    """
    m = _Module(unroll_loops, (fun, trees or {}), checkpoint, complex_values)
    parsed, rev, namer = m.prepare(fun, wrt, constants or {})
    fname = parsed.tree.name
    params = [a.id for a in parsed.tree.args.args]
    grads = _pack(rev.grads, many=many)
    entries = {}
    main: list[gast.FunctionDef] = []
    where = _where(parsed)
    of = ", ".join(wrt)
    if "grad" in kinds:
        name = entries["grad"] = m.function_name(f"{fname}_grad")
        body = list(rev.forward)

        def checked_seed() -> gast.Call:  # 1.0, after checking the result is a scalar
            return b.call(m.ns.bind("seed", seed, avoid=namer.taken), rev.result)
        if rev.seed:  # a full reduction needs no check (unless of complex values): nor,
            # unless returned, its value
            scalar = rev.scalar and not _makes_complex(rev.forward, m.ns)
            body += [b.comment("adjoint"),
                     b.assign(rev.seed, b.const(1.0) if scalar else checked_seed())]
        elif not (value or rev.scalar):
            body += [b.comment("the result is constant, the gradient zero; is it a scalar?"),
                     b.make(gast.Expr, value=checked_seed())]
        body += rev.adjoint + [b.ret(b.tuple_([rev.result, grads]) if value else grads)]
        what = "Value and gradient" if value else "Gradient"
        main.append(b.function(name, params, body,
                               f"{what} of {fname} ({where}) with respect to {of}."))
    if "vjp" in kinds:
        dout = rev.seed or namer.fresh("dout")
        fwd = entries["forward"] = m.function_name(f"{fname}_forward")
        bwd = entries["backward"] = m.function_name(f"{fname}_backward")
        # the tape lives in one call, and a branch defines names on one path only: then
        # the backward pass runs the forward code again
        replay = rev.taped or any(isinstance(s, gast.If) for s in rev.forward)
        if replay:   # (what only reports, print or logging, reports on the forward call)
            read, backward = list(params), _unreported(rev.forward, m.ns) + rev.adjoint
        else:
            local = set(params) | {n.id for s in rev.forward for n in gast.walk(s)
                                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            read = [n for n in _ordered_loads(rev.adjoint) if n in local]
            backward = rev.adjoint
        main.append(b.function(
            fwd, params, ([] if rev.taped else rev.forward) + [
                b.ret(b.tuple_([rev.result if not rev.taped else b.call(
                    m.primal(fun, constants=constants or {}), *[b.name(p) for p in params]),
                    b.tuple_([b.name(n) for n in read])]))],
            f"Value of {fname} ({where}) and what its backward pass reads."))
        main.append(b.function(
            bwd, read + [dout], backward + [b.ret(grads)],
            f"Gradient of {fname} with respect to {of}, given the cotangent {dout}."))
    return _assemble(main, m, entries, parsed)


def reports(stmt: gast.stmt, ns: Namespace) -> bool:
    """Whether `stmt` is a call that only reports (`print`, `warnings.warn`, logging)."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return False
    func = stmt.value.func
    obj = ns.resolve(func)
    if obj is None and isinstance(func, gast.Attribute):   # a logger's method
        owner = ns.resolve(func.value)
        obj = getattr(owner, func.attr, None) if owner is not None else None
    return side_call(obj)


def _unreported(stmts: list[gast.stmt], ns: Namespace) -> list[gast.stmt]:
    """`stmts` without the calls that only report, in nested blocks too."""
    out = []
    for stmt in stmts:
        if reports(stmt, ns):
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt = copy.copy(stmt)
            stmt.body = _unreported(stmt.body, ns) or [b.make(gast.Pass)]
            stmt.orelse = _unreported(stmt.orelse, ns)
        out.append(stmt)
    return out


def _through_adjoint(parsed: Parsed) -> Parsed:
    """`def f(x): return f(x)`: a function with an `@adjoint` rule, differentiated itself,
    gets its gradient from the rule (as `jax.custom_vjp` does), not from its source."""
    fn = parsed.tree
    params = [a.id for a in fn.args.args]
    alias = "_" + fn.name
    while alias in params:
        alias = "_" + alias
    call = b.call(b.name(alias), *[b.name(p) for p in params])
    body = [b.located(b.ret(call), fn.body[0])]
    tree = b.function(fn.name, params, body)
    tree.lineno, tree.col_offset = fn.lineno, fn.col_offset
    env = Env(parsed.env.globals, {**parsed.env.closure, alias: parsed.fun})
    return dataclasses.replace(parsed, tree=tree, env=env)


def _check_intermediate(fn: gast.FunctionDef, name: str, parsed: Parsed) -> None:
    """A `wrt` variable (the gradient at the point it is defined) must be assigned once,
    by an assignment at the top level of the function: else "that point" is not one."""
    top = {id(n) for s in fn.body if isinstance(s, (gast.Assign, gast.AnnAssign))
           for t in getattr(s, "targets", [getattr(s, "target", None)]) for n in gast.walk(t)}
    stores = [n for n in gast.walk(fn) if isinstance(n, gast.Name) and n.id == name
              and isinstance(n.ctx, gast.Store)]
    if len(stores) == 1 and id(stores[0]) in top:
        return
    where = next((n for n in stores if id(n) not in top), stores[-1])
    raise WrtError(f"wrt={name!r}: the gradient of an intermediate needs a variable "
                   f"assigned once, by an assignment at the top level of the function "
                   f"(not in a loop, branch or block); {name!r} is not",
                   filename=parsed.filename, lineno=where.lineno)


def _ordered_loads(stmts) -> list[str]:
    seen: dict[str, None] = {}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                seen.setdefault(n.id, None)
    return list(seen)


def _pack(names: list[str], many: bool) -> gast.AST:
    return b.tuple_([b.name(n) for n in names]) if many else b.name(names[0])


def _where(parsed: Parsed) -> str:
    return f"{os.path.basename(parsed.filename)}:{parsed.tree.lineno}"
