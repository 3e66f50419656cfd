"""rules: one record per operation (`Op`), and the gradient rules they hold.

Every function user code or generated code may call that srcgrad knows has one `Op`:
its adjoint rule, its tangent (forward-mode) rule, the array methods and attributes that
call it, and the facts the passes ask about it (fusable into a kernel, pure, a view, read
for its shape only, ...). The passes ask `lookup`, `lookup_tangent` and `fact`; no other
table lists functions. Adding a function's gradient is its rule and facts in one of the
rule modules below (and its helper, if it needs one, in `runtime`), and a test case.

A rule is a plain Python function with the public signature ``rule(dy, y, *args)``:
`dy` is the cotangent of the result `y`, and it returns the gradient of the one
argument, or a tuple with one entry per positional argument (`None` where there is no
gradient). Keyword parameters with defaults receive the call's keyword arguments
(``axis``, ``keepdims``). Rules are registered against the primal objects they serve
(``@rule(np.sin, math.sin)``); `nondifferentiable(...)` marks zero-gradient functions
and `constructor(...)` marks producers that may not receive a differentiated value.
Users add rules of their own: `user_rule` checks one and names where it was defined
(its results are shape-checked at run time), `NAMED` holds those registered under a
name for `gradient_override`, and `set_rule` records `@adjoint` rules of user functions.
How a rule becomes code is `inline`'s. Every other module of this package holds records
(a new one is imported without being named anywhere); `python -m srcgrad.rules.supported`
prints docs/supported.md from them.

The records are made on first need, not when srcgrad is imported: the first question
asked of the table (`lookup`, `fact`, ...) imports the record modules, and a built-in
rule's template is read from its source when first inlined. A record module that imports
SciPy says which SciPy modules it imports in one line, ``NEEDS = ("scipy.special",)``,
which is read from its text; it is imported only once the process has imported them (a
function that calls scipy.special.erf was defined where scipy.special is imported). A
question about a function without a record checks that again, and one about a builtin,
a ufunc or a NumPy or SciPy function imports the rest (`math.erf`'s record is beside
`scipy.special.erf`'s). `OPS`, the whole table, imports every record module, SciPy's too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import sys
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import gast

from ..errors import RuleError

MISSING_DEFAULT = inspect.Parameter.empty


class _NotConstant:
    """What a record's `refuse` and `alias` are given for an option a call passes as an
    expression: true, and equal to no value, so a check of the option refuses it."""

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT = _NotConstant()
_UNREAD = object()   # a template not read from its rule's source yet


@dataclass
class Rule:
    """A gradient rule for one or more primal functions."""

    fn: Callable | None
    kind: str = "rule"          # "rule" | "nondifferentiable" | "constructor"
    params: list[str] = field(default_factory=list)       # positional, after (dy, y)
    defaults: dict[str, Any] = field(default_factory=dict)  # keyword parameters
    origin: str | None = None   # "file.py:12" for a user's rule: its results are checked
    elementwise: bool = False   # per-argument templates are `unbroadcast(J_i dy, x_i)`
    real_only: bool = False     # holds for real arguments only: complex ones are refused
    body: gast.AST | None = field(default=None, repr=False)  # a lambda's returned expression
    _template: Any = field(default=_UNREAD, repr=False, compare=False)

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", self.kind)

    @property
    def template(self) -> list[gast.AST | None] | gast.AST | None:
        """The inlinable return value (None: the rule is called), read from the rule's
        source on first use, after checking that its returns give one gradient per
        argument (RuleError)."""
        if self._template is _UNREAD:
            returned, single = ([self.body], self.body) if self.body is not None \
                else _returned(self.fn)
            counts = (len(self.params), len(self.params) + len(self.defaults))
            for value in returned:
                _check_count(self.fn, value, counts)
            self._template = _template(single, counts)
        return self._template

    def globals_of(self) -> dict[str, Any]:
        return self.fn.__globals__


NAMED: dict[str, Rule] = {}   # register_gradient("Name") rules, for gradient_override


@dataclass(frozen=True)
class Joint:
    """A product whose value and tangent forward mode computes in one call:
    ``y, dy = joint(*args, *tangents)``, the tangents of the arguments at `positions`;
    ``dy = tangent(*args, *tangents)`` where y is not needed. `primal` is what the
    joint stands for (`operator.matmul` for `@` and np.matmul alike)."""

    primal: Any
    positions: tuple[int, ...]
    joint: Any
    tangent: Any


@dataclass
class Op:
    """What srcgrad knows of one function: its rules, how arrays call it, and the facts
    the passes ask about it. Unset facts are False/None."""

    primal: Any
    rule: Rule | None = None          # the adjoint; kind "nondifferentiable", "constructor"
    tangent: Tangent | None = None    # forward mode (None: read from an elementwise rule)
    uniform: Rule | None = None       # a full reduction's cotangent as a scalar (`uniform`)
    methods: tuple[str, ...] = ()     # `x.name(...)` on an array calls it with x first
    attributes: tuple[str, ...] = ()  # `x.name` on an array is it applied to x
    view: bool = False        # its result may be a view of its first argument
    fusable: bool = False     # numba compiles it into a kernel's loop at NumPy's speed
    last_in_kernel: bool = False  # a transcendental ufunc a kernel may apply last
    in_loop: Callable | None = None   # how a kernel's loop computes it (vectorizable)
    scalar_result: bool = False  # gives no array, whatever its arguments
    reduction: bool = False      # gives a number from one argument without keywords
    array_result: bool = False   # gives an array, whatever its arguments
    pure: bool = False           # a helper of generated code that changes no argument
    writes: int | None = None    # a helper that changes its argument at this position only
    cheap: bool = False          # cheaper to compute again than to keep (len, abs)
    selects: bool = False        # picks entries by the data (an index of any length)
    item_key: bool = False       # takes at key= a function of one item, which normalize
    # calls on each item (sorted, max, min): a lambda or nested def may be passed there
    shape_only: int | None = None   # the position of an argument read for its shape only
    add_into: Callable | None = None  # `d += op(...)` as `add_into(d, ...)`, in place
    joint: Joint | None = None        # its value and tangent in one call (forward mode)
    faster: Callable | None = None    # what generated adjoint code calls in its place
    called_as: Callable | None = None  # what generated code calls in the primal's place, a
    # function numba compiles (scipy.stats.norm.logpdf, a bound method numba cannot type);
    # its signature places the call's keyword arguments and fills its defaults
    compiled_as: Callable | None = None  # what generated code calls in the primal's place,
    # with the same signature, where numba's own form of the primal falls short (its
    # np.average takes an axis and raises): a function whose numba form srcgrad writes
    method_lacks: tuple[str, ...] = ()   # keywords numba's array method lacks: a method
    # call given one calls the function, x first (`x.take(i, mode="wrap")`: np.take's)
    looped: bool = False   # takes `loops=True` (a compiled loop) where a transform compiles
    refuse: Callable | None = None   # refuse(the call's options, `passes.base.options`)
    # -> why the call cannot be differentiated (logsumexp's return_sign=True), or None
    alias: Callable | None = None   # alias(the call's options) -> the function of one
    # argument such a call computes, differentiated by its record (np.linalg.svd with
    # compute_uv=False: singular_values), or None
    results: int | None = None   # gives a tuple of this many values (np.linalg.slogdet: 2);
    # its rule's dy is a tuple of their cotangents (zeros where one is unused)
    tuple_result: bool = False   # a helper that gives a tuple (or list) of gradients, one per
    # argument: forward mode adds its tangents item by item
    complex_result: bool = False   # gives complex values from real ones (np.fft.fft)
    sequence: bool = False   # joins a sequence of arrays, read alike as a list or a tuple
    # (numba's forms take a tuple: normalize passes a list display as one)
    updates: tuple | None = None   # (op, helper): called for its effect, `f(x, *rest)`
    # changes x as `x op= helper(x, *rest)` does, which normalize writes in its place
    # (np.add.at: `x += scattered(x, index, v)`)
    once: bool = False   # costly (a solve, an inverse): where a rule's gradients call it
    # more than once with the same operands, the adjoint calls it once (`inline.shared`)
    casts: bool = False   # takes a float64 dtype= (np.sum(x, dtype=float)), differentiated
    # as without it, with a numba form that takes it (rules/reduction_options.py)
    expanded: Callable | None = None   # expanded(the options a call gives: name -> its
    # constant's value, NOT_CONSTANT for an expression; one given as its default None,
    # True or False left out)
    # -> the source of an expression that computes the call from those options (`a`,
    # `axis`, `where`, ...) by operations with rules (or that source and a dict of the
    # helpers it names), or None: normalize writes a call with options its rule lacks
    # (np.sum's initial= and where=) as that expression
    no_gradient: dict[str, str] | None = None   # rule parameter -> what it is (an order, a
    # count, a shape parameter whose derivative has no closed form): its rule gives None
    # there, and a value being differentiated passed there is refused (`check_followed`)
    instead: str | None = None   # what to write in its place, which the refusal of a
    # differentiated call of it says (np.apply_along_axis takes a Python function: a loop)
    signature: Callable | None = None   # a function whose signature `expanded`'s call binds
    # the call's arguments to, where the primal's own cannot place them (ufunc.reduce's
    # initial= and where= are in its **kwargs)


# what an argument in a record's `no_gradient` is, as messages and docs/supported.md say it
SHAPE_PARAMETER = "a shape parameter, whose derivative has no closed form"

_OPS: dict[Any, Op] = {}   # (`OPS`, complete: see `__getattr__`)
_FACTS = frozenset(f.name for f in fields(Op)) - {"primal", "rule", "tangent"}


def _op(primal: Any) -> Op:
    """`primal`'s record, made empty if it has none. (NumPy's functions, ufuncs and
    Python's builtins all hash.)"""
    record = _OPS.get(primal)
    if record is None:
        record = _OPS[primal] = Op(primal)
    return record


def _record(primal: Any) -> Op | None:
    if isinstance(primal, Overridden):
        return None
    _load()
    try:
        record = _OPS.get(primal)
    except TypeError:  # unhashable object
        return None
    if record is None and _load():   # SciPy's records, its modules imported since
        record = _OPS.get(primal)
    if record is None and _foreign(primal) and _load(scipy=True):
        record = _OPS.get(primal)   # (math.erf's record is beside scipy.special.erf's)
    return record


def _foreign(primal: Any) -> bool:
    """Whether `primal` is a callable other than a user's Python function or a class: a
    builtin, a ufunc, a method, or a function of NumPy's or SciPy's. The table is made
    whole before saying that such an object has no record."""
    if not callable(primal) or inspect.isclass(primal):
        return False
    module = getattr(primal, "__module__", None) or ""
    return not inspect.isfunction(primal) or module.split(".")[0] in ("numpy", "scipy")


def records() -> list[Op]:
    """Every record of the table, SciPy's where the process has imported SciPy."""
    _load()
    return list(_OPS.values())


def describe(*primals: Any, **facts: Any) -> None:
    """Set facts of the records of `primals` (``describe(np.tanh, in_loop=vecmath.tanh)``).
    A joint's functions are pure helpers themselves."""
    unknown = set(facts) - _FACTS
    if unknown:
        raise TypeError(f"unknown facts {sorted(unknown)}: an Op has {sorted(_FACTS)}")
    for p in primals:
        for name, value in facts.items():
            setattr(_op(p), name, value)
    _NAMES.clear()
    if (j := facts.get("joint")) is not None:
        describe(j.joint, j.tangent, pure=True)


def fact(primal: Any, name: str) -> Any:
    """`primal`'s fact `name` (`fact(np.where, "fusable")`); None without a record."""
    record = _record(primal)
    return getattr(record, name) if record is not None else None


def joint_of(tangent: Any) -> Joint | None:
    """The `Joint` whose tangent function `tangent` is (see `passes.join`)."""
    return next((r.joint for r in records()
                 if r.joint is not None and r.joint.tangent is tangent), None)


def added_by(adder: Any) -> Any:
    """The helper whose `add_into` form `adder` is (None if it is none's)."""
    return next((r.primal for r in records()
                 if r.add_into is not None and r.add_into is adder), None)


_NAMES: dict[str, dict[str, Any]] = {}   # made from the records again after `describe`


def methods() -> dict[str, Any]:
    """Array method name -> the function it calls (`"sum"` -> np.sum)."""
    if "methods" not in _NAMES:
        _NAMES["methods"] = {m: r.primal for r in records() for m in r.methods}
    return _NAMES["methods"]


def attributes() -> dict[str, Any]:
    """Array attribute name -> the function it applies (`"T"` -> np.transpose)."""
    if "attributes" not in _NAMES:
        _NAMES["attributes"] = {a: r.primal for r in records() for a in r.attributes}
    return _NAMES["attributes"]


def make_rule(fn: Callable, body: gast.AST | None = None, *, read: bool = True) -> Rule:
    """Check `fn`'s signature and prepare its template (raises RuleError if malformed).
    `body`: the expression `fn` returns, for a lambda (inspect cannot cut one out of its
    line); else it is read from fn's source, now or (`read=False`, a built-in rule) when
    the template is first used."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise RuleError(f"gradient rule {fn!r} has no inspectable signature: {exc}") from None
    ps = list(sig.parameters.values())
    if len(ps) < 3 or any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)
                          for p in ps[:3]):
        raise RuleError(f"gradient rule {fn.__qualname__}{sig} must take (dy, y, *args): "
                        f"the cotangent, the result, then the primal's arguments")
    positional = [p.name for p in ps[2:] if p.default is MISSING_DEFAULT
                  and p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)]
    defaults = {p.name: p.default for p in ps[2:] if p.default is not MISSING_DEFAULT}
    r = Rule(fn, "rule", positional, defaults, body=body)
    if read:
        r.template  # noqa: B018  (reads and checks it)
    return r


def user_rule(fn: Callable, body: gast.AST | None = None) -> Rule:
    """`make_rule` for a rule a user wrote: the error names the rule's file:line, and the
    generated code checks the shapes of the gradients it returns."""
    code = getattr(fn, "__code__", None)
    where = dict(filename=code.co_filename, lineno=code.co_firstlineno) if code else {}
    if not callable(fn):
        raise RuleError(f"a gradient rule must be a function, not {fn!r}", **where)
    try:
        r = make_rule(fn, body)
    except RuleError as exc:
        raise RuleError(exc.message, **where) from None
    if code is not None:
        r.origin = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    return r


def _returned(fn: Callable) -> tuple[list[gast.AST], gast.AST | None]:
    """What the returns in `fn`'s source give, and the expression of its body if that
    is one return (docstrings aside) or fn is a lambda alone on its line: the template.
    ([], None) without source."""
    try:
        tree = gast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return [], None
    defs = [n for n in tree.body if isinstance(n, gast.FunctionDef)]
    lambdas = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)]
    if not defs:
        return ([lambdas[0].body], lambdas[0].body) if len(lambdas) == 1 else ([], None)
    values = [n.value for n in gast.walk(defs[0])
              if isinstance(n, gast.Return) and n.value is not None]
    body = [s for s in defs[0].body
            if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    single = body[0].value if len(body) == 1 and isinstance(body[0], gast.Return) else None
    return values, single


def _check_count(fn: Callable, value: gast.AST | None, counts: tuple[int, int]) -> None:
    """A `return (a, b)` in a rule must give one gradient per positional argument (those
    without a default, or all of them: `counts`)."""
    if isinstance(value, gast.Tuple):
        n = len(value.elts)
    elif isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
        n = 1  # arithmetic gives one gradient (a call might give a tuple: not known)
    else:
        return
    if n not in counts:
        raise RuleError(f"gradient rule {fn.__qualname__} returns {n} gradient(s) "
                        f"but takes {counts[0]} argument(s) after (dy, y): return one "
                        f"gradient per argument (None for no gradient)")


def rule(*primals: Any, elementwise: bool = False, **facts: Any
         ) -> Callable[[Callable], Callable]:
    """Register the decorated function as the gradient rule of every primal given.

    `elementwise`: the primal acts entry by entry (after broadcasting), so its Jacobian
    is diagonal and the rule, with `dy` read as an argument's tangent and without the
    `unbroadcast`, is also its tangent (forward-mode) rule. `facts`: see `describe`.
    """
    def register(fn: Callable) -> Callable:
        r = make_rule(fn, read=False)
        r.elementwise = elementwise
        r.real_only = any(p in _REAL_ONLY for p in primals)
        for p in primals:
            _op(p).rule = r
        describe(*primals, **facts)
        return fn
    return register


def set_rule(primal: Any, r: Rule) -> None:
    """`r` (a user's `@adjoint` rule) as `primal`'s adjoint."""
    _op(primal).rule = r



def uniform(*primals: Any) -> Callable[[Callable], Callable]:
    """Register the decorated function as the *uniform* rule of reductions over every
    axis (`np.sum(x)`, `np.mean(x)`): the cotangent of x, which is the same for every
    entry, as a scalar. The adjoint uses it where x feeds an elementwise rule only, which
    broadcasts it (no array of x's shape is filled)."""
    def register(fn: Callable) -> Callable:
        r = make_rule(fn, read=False)
        for p in primals:
            _op(p).uniform = r
        return fn
    return register


@dataclass
class Tangent:
    """How forward mode differentiates a primal: `rule`, a tangent rule
    ``tangent(dx, y, *args)`` giving per argument J_i dx (dx: that argument's tangent);
    `linear`, the primal itself applied to the tangents of the arguments at `positions`
    (it is jointly linear in them); `elementwise`, the adjoint rule read as a tangent
    rule; or `nondifferentiable` / `constructor` as for the adjoint."""

    kind: str
    rule: Rule | None = None
    positions: tuple[int, ...] = ()


def tangent(*primals: Any) -> Callable[[Callable], Callable]:
    """Register the decorated function as the tangent rule of every primal given."""
    def register(fn: Callable) -> Callable:
        r = make_rule(fn, read=False)
        r.real_only = any(p in _REAL_ONLY for p in primals)
        for p in primals:
            _op(p).tangent = Tangent("rule", r)
        return fn
    return register


_REAL_ONLY: set[Any] = set()


def real_only(*primals: Any) -> None:
    """Mark primals whose adjoint and tangent rules hold for real arguments only (the
    conjugates a complex argument needs are not in them: eigh, svd, var). Generated code
    passes their arguments through `real_values`, which refuses complex ones."""
    _REAL_ONLY.update(primals)
    for p in primals:
        record = _op(p)
        for r in (record.rule, record.tangent.rule if record.tangent else None):
            if r is not None and r.kind == "rule":
                r.real_only = True


def linear(*primals: Any, positions: tuple[int, ...] = (0,)) -> None:
    """Mark primals that are (jointly) linear in the arguments at `positions`: their
    tangent is the primal applied to those arguments' tangents (`np.sum(dx, axis=0)`)."""
    for p in primals:
        _op(p).tangent = Tangent("linear", positions=positions)


def lookup_tangent(primal: Any) -> Tangent | None:
    """The forward-mode rule of `primal`; None if it has none (a custom adjoint rule:
    an adjoint is not a tangent, as in JAX's `custom_vjp`)."""
    record = _record(primal)
    if record is None:
        return None
    t, r = record.tangent, record.rule
    if t is not None:
        return t
    if r is not None and r.origin is None and (r.elementwise or r.kind != "rule"):
        return Tangent("elementwise", r) if r.kind == "rule" else Tangent(r.kind)
    return None


def nondifferentiable(*primals: Any, **facts: Any) -> None:
    """Mark primals whose gradient is zero (as in JAX): floor, argmax, comparisons, len."""
    for p in primals:
        _op(p).rule = Rule(None, "nondifferentiable")
    describe(*primals, **facts)


def constructor(*primals: Any, **facts: Any) -> None:
    """Mark array producers (np.zeros, np.array): no gradient may flow through them.
    Their result is an array."""
    for p in primals:
        _op(p).rule = Rule(None, "constructor")
    describe(*primals, array_result=True, **facts)


@dataclass(eq=False)
class Overridden:
    """A primal as called inside a `gradient_override` block: `rule` replaces its own.
    `func` is how the user's code names the primal (`np.sign`), for the forward code;
    `method`, the method name where the user called it as one (`x.sum()`: the call now
    passes x first, and the forward code calls the method again)."""

    primal: Any
    rule: Rule
    func: gast.AST
    what: str
    method: str | None = None


def lookup(primal: Any) -> Rule | None:
    """`primal`'s adjoint rule (an override's, inside `gradient_override`)."""
    if isinstance(primal, Overridden):
        return primal.rule
    record = _record(primal)
    return record.rule if record is not None else None


def _template(value: gast.AST | None, counts: tuple[int, int]
              ) -> list[gast.AST | None] | gast.AST | None:
    """A single-`return` rule's return expression, per argument where it is a tuple of
    one entry per positional argument, or per argument with defaults included."""
    if value is None:
        return None
    if counts[0] == 1 and not (isinstance(value, gast.Tuple) and len(value.elts) == counts[1]
                               and counts[1] > 1):
        return [value]
    if isinstance(value, gast.Tuple) and len(value.elts) in counts:
        return [None if isinstance(e, gast.Constant) and e.value is None else e
                for e in value.elts]
    return value  # one expression giving the tuple of gradients


def _needs(name: str) -> frozenset[str]:
    """The SciPy modules the record module `name` declares it imports (`NEEDS = (...)`),
    read from its text: it is not imported before they are."""
    try:
        with open(os.path.join(__path__[0], f"{name}.py"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("NEEDS = "):
                    return frozenset(ast.literal_eval(line[len("NEEDS = "):]))
    except OSError:   # (installed without sources: it is imported with the others)
        pass
    return frozenset()


# record modules not imported yet -> the SciPy modules each needs (None: not listed yet)
_UNLOADED: dict[str, frozenset[str]] | None = None
_LOADING = threading.RLock()
_loading = False


def _loadable(scipy: bool) -> list[str]:
    return [name for name, needs in (_UNLOADED or {}).items()
            if scipy or all(m in sys.modules for m in needs)]


def _load(scipy: bool = False) -> bool:
    """Import the record modules not imported yet that need no SciPy module the process
    has not imported (every one with `scipy=True`); whether it imported one."""
    global _UNLOADED, _loading
    if _UNLOADED is not None and not _loading and not _loadable(scipy):
        return False
    with _LOADING:   # (another thread waits here until the table is whole)
        if _UNLOADED is None:
            _UNLOADED = {m.name: _needs(m.name) for m in pkgutil.iter_modules(__path__)
                         if m.name not in ("inline", "supported")}
        names = sorted(_loadable(scipy))
        outer, _loading = _loading, True
        try:
            for name in names:
                # a module that asks the table a question while it loads goes on to the next
                needs = _UNLOADED.pop(name, None)
                if needs is None:
                    continue
                try:
                    importlib.import_module(f"{__name__}.{name}")
                except BaseException:
                    _UNLOADED[name] = needs
                    raise
        finally:
            _loading = outer
        return bool(names)


def __getattr__(name: str) -> Any:
    if name == "OPS":   # the whole table, for docs/supported.md and the tests of every rule
        _load(scipy=True)
        return _OPS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
