"""The grammar: random, valid, smooth NumPy programs, one function per construct.

A program is a module with a few helpers and `f(<float args>, n)`, `n` an int >= 1 that
bounds loops; or, in the method form, `f = Model().loss` (or a classmethod `Model.loss`)
with the helpers methods of `Model`, reading the object's read-only attributes. Every value
has one of four shapes (`SHAPES`); an expression is generated for a wanted shape, so
everything broadcasts. Smoothness: functions with a restricted
domain get a positive or bounded argument (`log(e**2 + 1)`, `arcsin(0.5 * tanh(e))`),
`abs` gets a value bounded away from 0, and comparisons (`np.where`, masks, `if`) are
smooth almost everywhere (`np.std` of a broadcast constant would be sqrt at 0: it gets a
non-constant term), and the runner discards a program whose differences at two step
sizes disagree (a kink or jump near the sample point).
"""

from __future__ import annotations

import re

import numpy as np

SHAPES = [(), (2,), (3,), (2, 3)]

# Elementwise rules of the rule table, each made smooth on all of R: "{}" is the operand.
UNARY = [
    "np.sin({})", "np.cos({})", "np.tanh({})", "np.arctan({})", "np.negative({})",
    "np.positive({})", "np.square({})", "np.exp(np.sin({}))", "np.expm1(np.tanh({}))",
    "np.exp2(np.cos({}))", "np.sinh(np.tanh({}))", "np.cosh(np.sin({}))",
    "np.log(({}) ** 2 + 1.0)", "np.log1p(({}) ** 2)", "np.log2(({}) ** 2 + 2.0)",
    "np.log10(({}) ** 2 + 1.5)", "np.sqrt(({}) ** 2 + 1.0)", "np.cbrt(({}) ** 2 + 1.0)",
    "np.reciprocal(({}) ** 2 + 1.0)", "np.abs(({}) ** 2 + 0.5)", "np.absolute(np.cos({}) + 2.0)",
    "np.arcsin(0.5 * np.tanh({}))", "np.arccos(0.5 * np.sin({}))", "np.tan(0.5 * np.tanh({}))",
    "(({}) ** 2)", "(({}) ** 3)", "((({}) ** 2 + 1.0) ** 0.5)", "(({}) ** 2.0)",
    "np.clip({}, -5.0, 5.0)", "np.copy({})", "np.float_power(({}) ** 2 + 1.0, 1.5)",
    "np.arcsinh({})", "np.arctanh(0.5 * np.tanh({}))", "np.arccosh(({}) ** 2 + 1.5)",
    "np.deg2rad({})", "np.rad2deg(np.tanh({}))", "np.sinc({})", "np.fabs(({}) ** 2 + 0.5)",
    "np.nan_to_num({})", "scipy.special.expit({})", "scipy.special.erf({})",
    "scipy.special.gammaln(({}) ** 2 + 1.0)", "scipy.special.log_ndtr({})",
    "scipy.stats.norm.logpdf({})", "scipy.stats.norm.cdf({}, 0.5, 2.0)",
    "scipy.stats.t.logpdf({}, 3.0)",
]
BINARY = [
    "({} + {})", "({} - {})", "({} * {})", "({} / (({}) ** 2 + 1.0))", "np.add({}, {})",
    "np.subtract({}, {})", "np.multiply({}, {})", "np.divide({}, np.exp(np.tanh({})))",
    "np.arctan2({}, ({}) ** 2 + 1.0)", "np.hypot({}, ({}) ** 2 + 1.0)", "np.logaddexp({}, {})",
    "np.maximum({}, {} + 3.0)", "np.minimum({}, {} + 3.0)", "np.fmax({} - 3.0, {})",
    "np.fmin({} + 3.0, {})", "np.power(({}) ** 2 + 1.0, np.sin({}))", "np.logaddexp2({}, {})",
    "scipy.special.xlogy(({}) ** 2 + 1.0, ({}) ** 2 + 1.0)",
    "scipy.stats.norm.logpdf({}, {}, 1.5)",
]
# Reductions of an expression of shape (2, 3) (key) to a smaller shape.
REDUCE = {
    (): ["np.sum({})", "np.mean({})", "np.max({})", "np.min({})", "np.amax({})",
         "np.prod(np.tanh({}) * 0.5 + 1.0)", "np.std({} + np.arange(6.0).reshape(2, 3))",
         "np.var({})", "({}).sum()",
         "({}).mean()", "scipy.special.logsumexp({})", "np.linalg.norm(({}) + 3.0)",
         "np.trace(({})[:, :2])", "np.einsum('ij->', {})", "np.sort({}, axis=None)[-1]"],
    (3,): ["np.sum({}, axis=0)", "np.mean({}, axis=0)", "np.max({}, axis=0)",
           "({}).sum(axis=0)", "scipy.special.logsumexp({}, axis=0)", "np.einsum('ij->j', {})",
           "np.cumprod(np.tanh({}) * 0.5 + 1.0, axis=0)[-1]", "np.sort({}, axis=0)[0]"],
    (2,): ["np.sum({}, axis=1)", "np.mean({}, axis=-1)", "np.min({}, axis=1)",
           "np.cumsum({}, axis=1)[:, -1]", "np.diff({}, axis=1)[:, 0]", "np.einsum('ij->i', {})"],
}


# Newer operations, swapped in for a unary or reduction template NEWER of the time, drawn
# from a generator of their own (a seed's program keeps its structure).
NEWER = 0.15
# The chance that an item of a pair is read through a join, a branch or a comprehension
SHARING = 0.4
# The chance that a tuple statement is written with a Python idiom (`Grammar.idiom`).
IDIOMS = 0.3
NEWER_UNARY = [
    "np.interp({}, np.array([-1.0, 0.0, 1.5]), np.array([0.5, 2.0, -1.0]))",
    "np.interp({}, np.array([-2.0, 0.5, 1.0, 3.0]), np.array([1.0, -0.5, 0.25, 2.0]), -1.0, 0.5)",
]
NEWER_REDUCE = {
    (): ["np.nansum({})", "np.nanmean({})", "np.ptp({})", "np.median({})",
         "np.quantile({}, 0.3)", "np.percentile({}, 65.0)", "({}).item(4)",
         "max(({0})[0, 0], ({0})[1, 2], 0.3)", "min([({0})[1, 0], ({0})[0, 2] * 2.0, 1.1])",
         "np.sum(np.take({}, np.array([7, -9, 2]), mode='wrap'))"],
    (3,): ["np.nansum({}, axis=0)", "np.ptp({}, axis=0)", "np.median({}, axis=0)",
           "np.quantile({}, 0.25, axis=0)",
           "np.sum(np.pad({}, ((1, 1), (2, 0)), mode='wrap'), axis=0)[1:4]",
           "np.take({}, np.array([4, -1, 1]), axis=1, mode='clip')[1]"],
    (2,): ["np.nanmean({}, axis=1)", "np.ptp({}, axis=1)", "np.percentile({}, 80.0, axis=1)",
           "np.sum(np.pad({}, 2, mode='symmetric'), axis=1)[1:3]"],
}


# One variable made into another shape: CONVERT[(from, to)].format(name).
CONVERT = {
    ((), ()): "{}", ((), (2,)): "({} * np.ones(2))", ((), (3,)): "({} * np.ones(3))",
    ((), (2, 3)): "({} * np.ones((2, 3)))",
    ((2,), ()): "{}[0]", ((2,), (2,)): "{}", ((2,), (3,)): "np.concatenate([{0}, {0}[:1]])",
    ((2,), (2, 3)): "({}.reshape(2, 1) * np.ones(3))",
    ((3,), ()): "{}[-1]", ((3,), (2,)): "{}[1:]", ((3,), (3,)): "{}",
    ((3,), (2, 3)): "(np.ones((2, 1)) * {})",
    ((2, 3), ()): "{}[1, 2]", ((2, 3), (2,)): "{}[:, 0]", ((2, 3), (3,)): "{}[0]",
    ((2, 3), (2, 3)): "{}",
}

# Other ways of the same conversions, swapped in NEWER of the time (`Grammar.newer`): a
# view that broadcasts, to a shape written out, or read from an array (a name once
# normalized)
NEWER_CONVERT = {
    ((), (2, 3)): ["np.broadcast_to({}, (2, 3))", "np.broadcast_to({}, np.ones((2, 3)).shape)"],
    ((), (3,)): ["np.broadcast_to({}, 3)"],
    ((3,), (2, 3)): ["np.broadcast_to({}, (2, 3))",
                     "np.broadcast_to({}, shape=np.shape(np.ones((2, 3))))"],
    ((2,), (2, 3)): ["np.broadcast_to({}[:, None], (2, 3))"],
}


# index arrays of a (2, 3) matrix: entry pairs, and columns per row (take_along_axis)
PAIRS, PAIRS_DISTINCT = "[[1, 1, 0], [2, 2, 0]]", "[[1, 0, 0], [2, 1, 0]]"
ALONG, ALONG_DISTINCT = "[[2, 2, 0], [1, 0, 0]]", "[[2, 1, 0], [1, 0, 2]]"


# Reads of a list built in a loop (`Grammar.list_loop`): the first LIST_ROWS are of the
# shape of an entry, the others numbers.
LIST_READS = ["np.sum(np.stack({0}), axis=0)", "np.stack({0})[-1]", "np.array({0})[0]",
              "np.mean(np.array({0}), axis=0)", "np.asarray({0})[-1]", "sum({0})", "{0}[-1]",
              "{0}[0]", "{0}[len({0}) - 1]", "sum({0}) / len({0})",
              "np.sum({0})", "np.mean({0})", "np.sum(np.stack({0}) ** 2)", "np.sum({0}) * len({0})"]
LIST_ROWS = 10
GROWN = 0.3   # the chance that an accumulator starts from a differentiated value
# The share of programs in the method form, and the chance of a list built in a loop before
# each statement of `f`.
METHODS, LIST_LOOPS = 0.15, 0.03
# The chance, before each statement of `f`, of names swapped in a loop (a double buffer) or
# of a local dict written into at constant keys (`Grammar.buffers`).
BUFFERS = 0.04
# The chance, before each statement of `f`, of a Python iteration idiom (`Grammar.iterables`):
# functools.reduce, a loop over itertools.combinations or product, starred unpacking, a
# local name bound to a function.
ITERABLES = 0.04
# Arrays of the method form's object and class are read-only: a program that writes into
# one (through a view) fails in the primal, and is discarded.
FROZEN = ["def frozen(values):", "    a = np.array(values)", "    a.flags.writeable = False",
          "    return a", "", ""]


def broadcasts(small: tuple, big: tuple) -> bool:
    """Does a value of shape `small` broadcast to `big` (without changing it)?"""
    return small == () or small == big or (small == (3,) and big == (2, 3))


class Grammar:
    """Generates one program from a seed; `program()` returns (source, arg specs)."""

    def __init__(self, seed: int, repeats: bool = True):
        self.rng = np.random.default_rng(seed)
        self.repeats = repeats      # fancy indices with repeated entries (else permutations)
        self.count = 0
        self.helpers: list[tuple[str, list[tuple], object]] = []  # name, arg shapes, result
        self.helper_lines: list[str] = []   # helpers returning tuples, made on the way
        self.in_helper = False
        # closures are drawn from a generator of their own: a program is the one its seed
        # gave before they existed, some of its assignments made through a closure
        self.closures = np.random.default_rng([seed, 21])
        # so are the method form and the lists built in loops (`extras`)
        self.extra = np.random.default_rng([seed, 22])
        # and accumulators that start from a differentiated value of a smaller shape
        self.grown = np.random.default_rng([seed, 23])
        # and the newer operations swapped in for a template (`newer`)
        self.newest = np.random.default_rng([seed, 24])
        # and the Python idioms a tuple statement is written with (`stmt_tuple`)
        self.idioms = np.random.default_rng([seed, 25])
        # and the ways the second item of a pair is read (`taken`)
        self.sharing = np.random.default_rng([seed, 26])
        # and the double buffers and dict writes (`buffers`)
        self.buffering = np.random.default_rng([seed, 27])
        # and the Python iteration idioms (`iterables`)
        self.iterating = np.random.default_rng([seed, 28])
        self.context = "function"   # where code goes: function | method | static | class
        self.members: dict[str, tuple] = {}   # the object's attributes: name -> shape, value

    # -- small utilities -----------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def fresh(self, stem: str = "t") -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def newer(self, template: str, newer: list[str]) -> str:
        """`template`, or NEWER of the time one of the `newer` (from their own generator)."""
        if self.newest.random() < NEWER:
            return newer[int(self.newest.integers(len(newer)))]
        return template

    def fancy(self, repeated: str, distinct: str) -> str:
        return repeated if self.repeats else distinct

    def const(self) -> str:
        value = self.rng.uniform(-1.5, 1.5)
        return f"({value:.2f})" if value < 0 else f"{value:.2f}"

    # -- expressions -----------------------------------------------------------------------
    def expr(self, env: dict, shape: tuple, depth: int = 2) -> str:
        """An expression of exactly `shape` over the variables in `env` (name -> shape)."""
        if depth <= 0 or self.chance(0.25):
            return self.leaf(env, shape)
        kind = self.pick(["unary", "binary", "binary", "reduce", "index", "special"])
        if kind == "unary":
            return self.newer(self.pick(UNARY), NEWER_UNARY).format(
                self.expr(env, shape, depth - 1))
        if kind == "binary":
            other = self.pick([s for s in SHAPES if broadcasts(s, shape)])
            a, b = self.expr(env, shape, depth - 1), self.expr(env, other, depth - 1)
            if self.chance(0.5):
                a, b = b, a
            return self.pick(BINARY).format(a, b)
        if kind == "reduce" and shape in REDUCE:
            return self.newer(self.pick(REDUCE[shape]), NEWER_REDUCE[shape]).format(
                self.expr(env, (2, 3), depth - 1))
        if kind == "index":
            return self.index_read(env, shape, depth)
        return self.special(env, shape, depth)

    def leaf(self, env: dict, shape: tuple) -> str:
        """A variable of `shape`, another variable converted to it, or a constant."""
        names = [n for n, s in env.items() if s == shape]
        if names and self.chance(0.7):
            return self.pick(names)
        ints = [n for n, s in env.items() if s == "int"]
        if shape == () and ints and self.chance(0.2):
            return f"({self.pick(ints)} * 0.5)"
        floats = [n for n, s in env.items() if s != "int"]
        if not floats or self.chance(0.1):
            return self.const() if shape == () else f"np.ones({shape})"
        name = self.pick(floats)
        way = (env[name], shape)
        return self.newer(CONVERT[way], NEWER_CONVERT.get(way, [CONVERT[way]])).format(name)

    def index_read(self, env: dict, shape: tuple, depth: int) -> str:
        """Subscript reads: ints, negative ints, slices, fancy lists with repeats, masks."""
        loop = [n for n, s in env.items() if s == "int"]
        i = self.pick(loop) if loop and self.chance(0.5) else None
        v3 = self.expr(env, (3,), depth - 1)
        m = self.expr(env, (2, 3), depth - 1)
        if shape == ():
            return self.pick([
                f"({v3})[{i} % 3]" if i else f"({v3})[{self.pick([0, 1, 2, -1, -3])}]",
                f"({m})[{i} % 2, -1]" if i else f"({m})[1, {self.pick([0, 2, -2])}]",
                f"np.sum(({v3}){self.fancy('[[0, 0, 2]]', '[[0, 2]]')})",
                f"np.sum(({v3})[({v3}) > {self.const()}] ** 2)",
                f"np.sum(({m})[:, {self.fancy('[2, 2, 0]', '[2, 0]')}] * 1.5)",
                f"np.dot({v3}, {self.expr(env, (3,), depth - 1)})",
            ])
        if shape == (2,):
            return self.pick([f"({v3})[1:]", f"({v3})[:2]", f"({v3})[::-2]",
                              f"({v3}){self.fancy('[[1, 1]]', '[[2, 1]]')}",
                              f"({m})[:, {i} % 3]" if i else f"({m})[:, 0]",
                              f"({m}) @ ({self.expr(env, (3,), depth - 1)})"])
        if shape == (3,):
            return self.pick([f"({v3}){self.fancy('[[2, 0, 0]]', '[[2, 0, 1]]')}", f"({v3})[::-1]",
                              f"({m})[{i} % 2]" if i else f"({m})[-1]",
                              f"({self.expr(env, (2,), depth - 1)}) @ ({m})"])
        return self.pick([f"({m}){self.fancy('[[1, 1]]', '[[1, 0]]')}",
                          f"({m})[:, {self.fancy('[2, 0, 0]', '[2, 0, 1]')}]", f"({m})[::-1]",
                          f"np.where(({m}) > {self.const()}, {m}, {self.expr(env, (), 0)})"])

    def special(self, env: dict, shape: tuple, depth: int) -> str:
        """Shape-changing calls and helper calls."""
        helpers = [(call, args) for name, args, result, kind in self.helpers
                   if result == shape and (call := self.call(name, kind))]
        if helpers and self.chance(0.5):
            call, args = self.pick(helpers)
            return f"{call}({', '.join(self.expr(env, s, depth - 1) for s in args)})"
        if self.chance(0.15):
            return self.comprehension(env, shape, depth)
        e2, e3 = self.expr(env, (2,), depth - 1), self.expr(env, (3,), depth - 1)
        if shape == (2, 3):
            return self.pick([f"np.outer({e2}, {e3})", f"({e2}).reshape(2, 1) * ({e3})",
                              f"np.stack([{e3}, {e3}])",
                              f"np.transpose(np.transpose({self.expr(env, shape, depth - 1)}))",
                              f"np.expand_dims({e2}, 1) + {e3}",
                              f"np.reshape(np.concatenate([{e3}, {e3}]), (2, 3))",
                              f"np.take({self.expr(env, shape, depth - 1)}, "
                              f"{self.fancy('[2, 0, 2]', '[2, 0, 1]')}, axis=1)",
                              f"np.take_along_axis({self.expr(env, shape, depth - 1)}, "
                              f"np.array({self.fancy(ALONG, ALONG_DISTINCT)}), axis=1)",
                              f"np.flip({self.expr(env, shape, depth - 1)}, axis=1)",
                              f"np.roll({self.expr(env, shape, depth - 1)}, 1, axis=1)",
                              f"np.vstack([{e3}, {e3}])", f"np.tile({e3}, (2, 1))",
                              f"np.repeat(({e2}).reshape(2, 1), 3, axis=1)",
                              f"np.cumsum({self.expr(env, shape, depth - 1)}, axis=1)",
                              f"np.sort({self.expr(env, shape, depth - 1)}, axis=1)",
                              f"np.array([{e3}, {e3}])", f"np.einsum('i,j->ij', {e2}, {e3})",
                              f"scipy.special.softmax({self.expr(env, shape, depth - 1)}, axis=1)",
                              f"np.pad(({e2}).reshape(2, 1) * np.ones((2, 2)), ((0, 0), (0, 1)), "
                              f"mode='edge')"])
        if shape == (3,):
            return self.pick([f"np.concatenate([{e2}, ({e3})[:1]])",
                              f"np.ravel(np.expand_dims({e3}, 0))",
                              f"np.squeeze(np.reshape({e3}, (1, 3)))",
                              f"np.where({e3} > {self.const()}, {e3}, np.sin({e3}))",
                              f"np.take({self.expr(env, (2, 3), depth - 1)}, "
                              f"{self.fancy('[4, 4, 0]', '[4, 5, 0]')})",
                              f"np.hstack([{e2}, ({e3})[:1]])", f"np.flip({e3})",
                              f"np.diff(np.concatenate([{e2}, {e2}]))",
                              f"np.cumprod(np.tanh({e3}) * 0.5 + 1.0)",
                              f"np.array([{self.expr(env, (), depth - 1)}, ({e3})[0], ({e3})[1]])"])
        if shape == (2,):
            return self.pick([f"np.stack([({e3})[0], ({e3})[2]])",
                              f"np.array([({e3})[0], ({e3})[2]])", f"np.diff({e3})",
                              f"np.linalg.solve(np.eye(2) * 3.0 + np.outer({e2}, {e2}) * 0.1, "
                              f"{e2})"])
        return self.pick([f"float({self.expr(env, (), depth - 1)})",
                          f"np.dot({e2}, {e2})", f"({e3}) @ ({e3})",
                          f"np.where(({e3})[0] > {self.const()}, ({e3})[1], ({e3})[2])",
                          f"np.linalg.det(np.eye(2) * 2.0 + np.outer({e2}, {e2}) * 0.2)",
                          f"scipy.special.logsumexp({e3})", f"np.trace(np.outer({e2}, {e2}))"])

    def comprehension(self, env: dict, shape: tuple, depth: int) -> str:
        """sum, max or min of a generator expression or list comprehension, over a range of
        a data-dependent length (filtered, nested) or over an array's entries; or the list
        of one over a range of literals, stacked."""
        c, d = self.fresh("c"), self.fresh("c")
        n = "n" if env.get("n") == "int" else "2"    # (a helper has no n)
        inner = dict(env, **{c: "int"})
        if shape != ():   # a list over a range of literals: the display it stands for
            if shape == (3,) and self.chance(0.5):
                return f"sum(({self.expr(inner, (3,), depth - 1)} for {c} in range({n})), " \
                       f"np.zeros(3))"
            item = self.expr(inner, shape[1:], depth - 1)
            return f"np.{self.pick(['array', 'stack'])}([{item} for {c} in range({shape[0]})])"
        if self.chance(0.3):
            over = self.pick([(3,), (2,)])
            inner = dict(env, **{c: ()})
            return f"sum([{self.expr(inner, (), depth - 1)} for {c} in {self.expr(env, over, 1)}])"
        kind = self.pick(["sum", "sum", "max", "min", "nested"])
        if kind == "nested":
            both = dict(inner, **{d: "int"})
            return f"sum({self.expr(both, (), depth - 1)} for {c} in range({n}) " \
                   f"for {d} in range({c} + 1))"
        value = self.expr(inner, (), depth - 1)
        if kind == "sum":
            return f"sum({value} for {c} in range({n}) if {self.cond(inner)})"
        return f"{kind}({value} for {c} in range(1, {n} + 1))"

    def cond(self, env: dict) -> str:
        loop = [n for n, s in env.items() if s == "int"]
        if loop and self.chance(0.5):
            i = self.pick(loop)
            return self.pick([f"{i} % 2 == 0", f"{i} == 1", f"{i} > n - 2"])
        return f"{self.expr(env, (), 1)} > {self.const()}"

    # -- statements --------------------------------------------------------------------------
    def block(self, env: dict, depth: int, size: int, in_loop: bool = False) -> list[str]:
        lines: list[str] = []
        local = dict(env)
        for _ in range(size):
            if not self.in_helper and self.extra.random() < LIST_LOOPS:
                lines += self.list_loop(local)
            if not self.in_helper and self.buffering.random() < BUFFERS:
                lines += self.buffers(local)
            if not self.in_helper and self.iterating.random() < ITERABLES:
                lines += self.iterables(local)
            lines += self.statement(local, depth, in_loop)
        for name in list(local):            # names bound by this block stay out of env,
            if name in env:                 # shapes of outer names are unchanged
                env[name] = local[name]
        return lines

    def statement(self, env: dict, depth: int, in_loop: bool) -> list[str]:
        kinds = ["assign", "assign", "reassign", "augment", "write", "fresh_write", "view",
                 "tuple", "helper_tuple"]
        if depth > 0:
            kinds += ["if", "for", "for", "while", "accumulate"]
        if in_loop:
            kinds += ["break", "continue"]
        kinds += ["return"]
        return getattr(self, "stmt_" + self.pick(kinds))(env, depth)

    def stmt_assign(self, env, depth):
        shape = self.pick(SHAPES)
        name = self.fresh()
        lines = self.through_closure(name, self.expr(env, shape), env)
        env[name] = shape
        return lines

    def through_closure(self, target: str, value: str, env: dict) -> list[str]:
        """`target = value`; or, now and then, the same through a lambda or nested def
        that reads the locals, one of those it reads made its parameter, called at once or
        by a helper it is passed to."""
        rng = self.closures
        if rng.random() >= 0.15 or re.fullmatch(r"[\w.()]+", value):   # (not a bare name)
            return [f"{target} = {value}"]
        used = [n for n in self.floats(env) if re.search(rf"\b{n}\b", value)]
        arg = used[int(rng.integers(len(used)))] if used else ""
        param = f"v_{target}" if arg else ""
        body = re.sub(rf"\b{arg}\b", param, value) if arg else value
        name = f"c_{target}"
        lines = [f"{name} = lambda {param}: {body}".replace("lambda :", "lambda:")] \
            if rng.random() < 0.5 else [f"def {name}({param}):", f"    return {body}"]
        if rng.random() < 0.3:
            apply = f"apply_{target}"
            self.helper_lines += [f"def {apply}(fn{', a' if arg else ''}):",
                                  f"    return fn({'a' if arg else ''})"]
            return lines + [f"{target} = {apply}({name}{', ' + arg if arg else ''})"]
        return lines + [f"{target} = {name}({arg})"]

    def floats(self, env):
        """The float variables, which may be written: not the attributes (`self.W0`)."""
        return [n for n, s in env.items() if s != "int" and "." not in n]

    def stmt_reassign(self, env, depth):
        name = self.pick(self.floats(env))
        return [f"{name} = {self.expr(env, env[name])}"]

    def stmt_augment(self, env, depth):
        name = self.pick(self.floats(env))
        op = self.pick(["+=", "-=", "*="])
        value = self.expr(env, self.pick([s for s in SHAPES if broadcasts(s, env[name])]))
        if op == "*=":
            value = f"np.tanh({value})"
        return [f"{name} {op} {value}"]

    def target(self, env, name):
        """A subscript of `name` and the shape of what it selects."""
        loop = [n for n, s in env.items() if s == "int"]
        i = self.pick(loop) if loop and self.chance(0.6) else None
        if env[name] == (2, 3):
            return self.pick([(f"{name}[{i} % 2]" if i else f"{name}[0]", (3,)),
                              (f"{name}[1, {i} % 3]" if i else f"{name}[-1, 1]", ()),
                              (f"{name}[:, 1:]", (2, 2)),
                              (f"{name}{self.fancy(PAIRS, PAIRS_DISTINCT)}", (3,)),
                              (f"{name}[:, {self.fancy('[0, 2, 0]', '[0, 2, 1]')}]", (2, 3))])
        n = env[name][0]
        return self.pick([(f"{name}[{i} % {n}]" if i else f"{name}[-1]", ()),
                          (f"{name}[1:]", (n - 1,)), (f"{name}[:]", (n,)),
                          (f"{name}{self.fancy(f'[[0, {n - 1}, 0]]', f'[[0, {n - 1}]]')}",
                           (3,) if self.repeats else (2,))])

    def stmt_write(self, env, depth):
        arrays = [n for n in self.floats(env) if env[n] != ()]
        if not arrays:
            return self.stmt_assign(env, depth)
        name = self.pick(arrays)
        where, shape = self.target(env, name)
        value = self.expr(env, shape if shape in SHAPES else ())
        if where.count("[") > 1:   # a value that overlaps the entries a fancy index writes
            value = f"({value}) * 1.0"   # NumPy 1.24 reads it partly written: a copy
        return [f"{where} {self.pick(['=', '+=', '-=', '*='])} {value}"]

    def stmt_fresh_write(self, env, depth):
        name, shape = self.fresh("s"), self.pick([(2,), (3,), (2, 3)])
        env[name] = shape
        where, part = self.target(env, name)
        value = self.expr(env, part if part in SHAPES else ())
        return [f"{name} = np.zeros({shape})", f"{where} {self.pick(['=', '+='])} {value}"]

    def stmt_view(self, env, depth):
        """A view taken before a write into its base, read afterwards."""
        arrays = [n for n in self.floats(env) if env[n] in ((3,), (2, 3))]
        if not arrays:
            return self.stmt_assign(env, depth)
        base = self.pick(arrays)
        view = self.fresh("v")
        if env[base] == (3,):
            env[view] = (2,)
            lines = [f"{view} = {base}[1:]", f"{base}[1] = {self.expr(env, ())}"]
        else:
            env[view] = (3,)
            lines = [f"{view} = {base}[1]", f"{base}[1, 0] = {self.expr(env, ())}"]
        return lines

    def stmt_tuple(self, env, depth):
        shape = self.pick(SHAPES)
        a, b, p = self.fresh(), self.fresh(), self.fresh("p")
        one, two = self.expr(env, shape), self.expr(env, shape)
        env[a], env[b] = shape, shape
        swapped = self.chance(0.5)
        if self.newest.random() < NEWER:   # displays joined, max/min of one held in a name
            q = self.fresh("q")
            last = f"{self.newest.choice(['max', 'min'])}({q})" if shape == () else f"{q}[1]"
            return [f"{p} = [{one}, {two}]", f"{q} = {p} + [({one}) * 0.5]",
                    f"{a} = {q}[0] * {q}[2]", f"{b} = {last}"]
        if swapped:
            return [f"{a}, {b} = {one}, {two}", f"{a}, {b} = {b}, {a}"]
        if self.idioms.random() < IDIOMS:
            return self.idiom(p, a, b, one, two, shape)
        return [f"{p} = ({one}, {two})", f"{a} = {p}[0] * {p}[1]", f"{b} = {self.taken(p, one)}"]

    def taken(self, p: str, one: str) -> str:
        """The second item of the pair `p`, read straight (`p[1]`), or SHARING of the time
        through a join, a reversed copy, a branch or a comprehension (from a generator of
        its own): each may be the pair's array, which a later `op=` changes in place."""
        if self.sharing.random() >= SHARING:
            return f"{p}[1]"
        v = self.fresh("v")
        forms = [f"({p} + ({one},))[1]", f"{p}[::-1][0]", f"({p}[1] if len({p}) > 1 else {p}[0])",
                 f"[{v} for {v} in {p}][1]"]
        return forms[int(self.sharing.integers(len(forms)))]

    def idiom(self, p: str, a: str, b: str, one: str, two: str, shape: tuple) -> list[str]:
        """Two values bound to `a` and `b` through a Python idiom: a starred target, a
        dict comprehension and a loop over its items, an item of a list replaced, or
        (numbers) `sorted` and `max(..., key=abs)`."""
        q = self.fresh("q")
        forms = ["starred", "dict", "item"] + (["sorted"] if shape == () else [])
        form = forms[int(self.idioms.integers(len(forms)))]
        if form == "starred":
            return [f"{p}, *{q} = [{one}, {two}, ({one}) * 0.5]",
                    f"{a} = {p} * {q}[0] + {q}[1]", f"{b} = {q}[0]"]
        if form == "dict":
            i, k, v = self.fresh("i"), self.fresh("k"), self.fresh("v")
            return [f"{q} = {{{k}: {v} * ({i} + 1) for {i}, ({k}, {v}) in enumerate(zip("
                    f"('u', 'v'), [{one}, {two}]))}}", f"{a} = {q}['u'] * {q}['v']",
                    f"{b} = 0.0", f"for {k}, {v} in {q}.items():",
                    f"    {b} = {b} + {v} * len({k})"]
        if form == "item":
            return [f"{p} = [{one}, {two}]", f"{p}[0] = ({two}) * 0.5", f"{p}[-1] += {p}[0]",
                    f"{a} = {p}[0] * {p}[1]", f"{b} = {p}[1]"]
        down = bool(self.idioms.random() < 0.5)
        return [f"{q} = sorted([{one}, {two}, ({one}) * 0.5], reverse={down})",
                f"{a} = {q}[0] * {q}[2]", f"{b} = max([{one}, {two}], key=abs) + {q}[1]"]

    def stmt_helper_tuple(self, env, depth):
        shape = self.pick(SHAPES)
        name = self.fresh("h")
        self.helpers.append((name, [shape], None, "function"))   # not called in expressions
        body_env = {"a": shape}
        outer, self.context = self.context, "function"
        self.helper_lines += [f"def {name}(a):",
                              f"    b = {self.expr(body_env, shape)}",
                              f"    return {self.expr(dict(body_env, b=shape), shape)}, b"]
        self.context = outer
        a, b = self.fresh(), self.fresh()
        line = f"{a}, {b} = {name}({self.expr(env, shape)})"
        env[a], env[b] = shape, shape
        return [line]

    def stmt_if(self, env, depth):
        lines = [f"if {self.cond(env)}:"] + indent(self.block(env, depth - 1, 2))
        if self.chance(0.5):
            lines += ["else:"] + indent(self.block(env, depth - 1, 2))
        return lines

    def loop_var(self, env):
        free = [v for v in ("i", "j", "k") if v not in env]
        return free[0] if free else None

    def stmt_for(self, env, depth):
        var = self.loop_var(env)
        if var is None:
            return self.stmt_assign(env, depth)
        outer = [n for n, s in env.items() if s == "int"]
        bound = self.pick(["range(n)", "range(2)", "range(1, n + 1)"]
                          + ([f"range({outer[-1]})"] if outer else []))
        inner = dict(env)
        inner[var] = "int"
        body = self.block(inner, depth - 1, int(self.rng.integers(1, 4)), in_loop=True)
        for name in env:
            env[name] = inner[name]
        return [f"for {var} in {bound}:"] + indent(body)

    def stmt_while(self, env, depth):
        var = self.loop_var(env)
        if var is None:
            return self.stmt_assign(env, depth)
        inner = dict(env)
        inner[var] = "int"
        body = self.block(inner, depth - 1, 2, in_loop=True)
        for name in env:
            env[name] = inner[name]
        return [f"{var} = 0", f"while {var} < {self.pick(['n', '2'])}:",
                f"    {var} += 1"] + indent(body)

    def stmt_accumulate(self, env, depth):
        """An int that becomes a float (or an array) in a loop that runs at least once."""
        var = self.loop_var(env)
        if var is None:
            return self.stmt_assign(env, depth)
        acc, shape = self.fresh("acc"), self.pick(SHAPES)
        before = dict(env)
        inner = dict(env)
        inner[var] = "int"
        op = self.pick(["+", "*"])
        first = f"{acc} = {acc} {op} {self.expr(inner, shape)}"
        inner[acc] = shape
        body = [first] + self.block(inner, depth - 1, int(self.rng.integers(0, 3)), True)
        for name in env:
            env[name] = inner[name]
        env[acc] = shape
        start = f"{1 if op == '*' else 0}"
        if self.grown.random() < GROWN:   # a value that grows by broadcasting in the loop
            main, self.rng = self.rng, self.grown
            start = self.expr(before, self.pick([s for s in SHAPES if broadcasts(s, shape)]))
            self.rng = main
        return [f"{acc} = {start}", f"for {var} in range(n):"] + indent(body)

    def stmt_break(self, env, depth):
        return [f"if {self.cond(env)}:", "    break"]

    def stmt_continue(self, env, depth):
        return [f"if {self.cond(env)}:", "    continue"]

    def stmt_return(self, env, depth):
        if self.in_helper or not self.chance(0.3):
            return self.stmt_assign(env, depth)
        return [f"if {self.cond(env)}:", f"    return {self.result(env)}"]

    def result(self, env) -> str:
        names = self.floats(env)
        args = [n for n in names if n.startswith("x")]
        local = [n for n in names if not n.startswith("x")]
        picked = args + local[-2:] + ([self.pick(local)] if local else [])
        return " + ".join(self.pick(["np.sum(np.sin({}))", "np.sum(({}) ** 2)", "np.sum({})"])
                          .format(n) for n in picked)

    # -- lists built in loops, methods ---------------------------------------------------
    def list_loop(self, env: dict) -> list[str]:
        """`L = []`, a loop over a range of run-time length >= 1 appending to it once per
        run, and one or two reads of it after the loop (`LIST_READS`); drawn from `extra`."""
        var = self.loop_var(env)
        if var is None or env.get("n") != "int":
            return []
        main, self.rng = self.rng, self.extra
        try:
            name, shape = self.fresh("L"), self.pick(SHAPES)
            outer = [v for v, s in env.items() if s == "int" and v != "n"]
            bound = self.pick(["range(n)", "range(1, n + 1)", "range(n + 1)"]
                              + ([f"range({outer[-1]} + 1)"] if outer else []))
            inner = dict(env, **{var: "int"})
            body = self.stmt_assign(inner, 0) if self.chance(0.4) else []
            body.append(f"{name}.append({self.expr(inner, shape)})")
            lines = [f"{name} = []", f"for {var} in {bound}:"] + indent(body)
            for _ in range(int(self.rng.integers(1, 3))):
                read = self.pick(LIST_READS)
                target = self.fresh()
                lines.append(f"{target} = {read.format(name)}")
                env[target] = shape if read in LIST_READS[:LIST_ROWS] else ()
        finally:
            self.rng = main
        return lines

    def buffers(self, env: dict) -> list[str]:
        """Drawn from `buffering`: two or three names of one shape swapped in a loop (a
        double buffer: one written from the other, in place or bound again, then `a, b = b,
        a`, a rotation or a swap through a temporary), or a local dict written into at
        constant keys (`d['k'] = v`, `+=`, `update`) and read."""
        main, self.rng = self.rng, self.buffering
        try:
            return self.swap_loop(env) if self.chance(0.6) else self.dict_writes(env)
        finally:
            self.rng = main

    def iterables(self, env: dict) -> list[str]:
        """Drawn from `iterating`: functools.reduce over the first axis of an array, a loop
        over itertools.combinations or product of vectors, `h, *rest = v`, or a local name
        bound to one of two functions by a condition."""
        main, self.rng = self.rng, self.iterating
        try:
            kind, target = self.pick(["reduce", "combinations", "starred", "function"]), \
                self.fresh()
            if kind == "reduce":
                rows = self.pick([(3,), (2, 3)])
                item = rows[1:]
                seq = self.expr(env, rows)
                if self.chance(0.5):
                    step = self.pick(["lambda a, b: a * 0.5 + np.sin(b)",
                                      "lambda a, b: np.maximum(a, b) + a * b"])
                    lines = [f"{target} = functools.reduce({step}, {seq}, "
                             f"{self.expr(env, item)})"]
                else:
                    lines = [f"{target} = functools.reduce("
                             f"{self.pick(['np.add', 'np.multiply', 'operator.add'])}, {seq})"]
                env[target] = item
                return lines
            if kind == "combinations":
                a, b = self.fresh("a"), self.fresh("b")
                loop = self.pick([f"itertools.combinations({self.expr(env, (3,))}, 2)",
                                  f"itertools.product({self.expr(env, (3,))}, "
                                  f"{self.expr(env, (3,))})"])
                lines = [f"{target} = {self.expr(env, ())}", f"for {a}, {b} in {loop}:",
                         f"    {target} = {target} + {a} * {b}"]
                env[target] = ()
                return lines
            if kind == "starred":
                head, rest = self.fresh("h"), self.fresh("rest")
                read = self.pick(["np.sum(np.array({}))", "sum({})", "{}[0]"])
                lines = [f"{head}, *{rest} = {self.expr(env, (3,))}",
                         f"{target} = {head} * {read.format(rest)}"]
                env[target] = ()
                return lines
            fn, shape = self.fresh("fn"), self.pick(SHAPES)
            lines = [f"{fn} = np.sin if {self.cond(env)} else np.tanh",
                     f"{target} = {fn}({self.expr(env, shape)})"]
            env[target] = shape
            return lines
        finally:
            self.rng = main

    def swap_loop(self, env: dict) -> list[str]:
        var = self.loop_var(env)
        if var is None:
            return []
        shape = self.pick([(), (3,), (2, 3)])
        names = [n for n in self.floats(env) if env[n] == shape]
        a = self.pick(names) if names and self.chance(0.4) else self.fresh("buf")
        b, c = self.fresh("buf"), self.fresh("buf")
        three = self.chance(0.3)
        lines = [] if a in env else [f"{a} = {self.expr(env, shape)}"]
        if shape != () and self.chance(0.5):   # an array of its own, as people write them
            lines[:] = [f"{a} = {a}.copy()"] if a in env else [lines[0] + ".copy()"]
        own = dict(env, **{a: shape})
        lines += [f"{b} = " + self.pick([self.expr(own, shape), f"np.zeros_like({a})",
                                         f"np.copy({self.expr(own, shape)})"])]
        if three:
            lines.append(f"{c} = {b} * 0.5" if shape == () else f"{c} = np.zeros({shape})")
        for name in (a, b) + ((c,) if three else ()):
            env[name] = shape
        inner = dict(env, **{var: "int"})
        value = self.expr(inner, shape, 1)
        if shape == ():
            body = [f"{b} = {value}"]
        else:
            target, part = self.target(inner, b)
            body = self.pick([[f"{b}[...] = {value}"], [f"{b} = {value}"],
                              [f"{target} {self.pick(['=', '+='])} "
                               f"{self.expr(inner, part if part in SHAPES else (), 1)}"]])
        if three:
            body.append(f"{a}, {b}, {c} = {b}, {c}, {a}")
        else:
            body += self.pick([[f"{a}, {b} = {b}, {a}"],
                               [f"tmp = {a}", f"{a} = {b}", f"{b} = tmp"]])
        bound = self.pick(["range(n)", "range(1, n + 1)", "range(2)"])
        return lines + [f"for {var} in {bound}:"] + indent(body)

    def dict_writes(self, env: dict) -> list[str]:
        shape = self.pick(SHAPES)
        d, t = self.fresh("d"), self.fresh()
        lines = [f"{d} = {{'a': {self.expr(env, shape)}, 'b': {self.expr(env, ())}}}"]
        var = self.loop_var(env)
        writes = self.pick([[f"{d}['a'] = {self.expr(env, shape, 1)} + {d}['b']"],
                            [f"{d}['b'] += np.sum({d}['a'])"],
                            [f"{d}.update(a={d}['a'] * {d}['b'])"],
                            [f"{d}['b'] = {d}['b'] * 0.5", f"{d}['a'] -= {d}['b']"]])
        if var is not None and self.chance(0.4):
            lines += [f"for {var} in range(n):"] + indent(writes)
        else:
            lines += writes
        env[t] = shape
        return lines + [f"{t} = {d}['a'] * {d}['b']"]

    def attributes(self, kind: str) -> dict:
        """The attributes code of `kind` reads: of the object in a method (its own and the
        class's), of the class in a classmethod."""
        if kind == "method":
            return {**{f"self.{a}": s for a, (s, _) in self.members.items()},
                    "self.scale": (), "self.B": (3,)}
        return {"cls.scale": (), "cls.B": (3,)} if kind == "class" else {}

    def call(self, name: str, kind: str) -> str | None:
        """How code of the current context calls helper `name` of `kind`, if it can."""
        forms = {"function": [name],
                 "method": [f"self.{name}"] if self.context == "method" else [],
                 "static": {"method": [f"self.{name}", f"Model.{name}"],
                            "class": [f"cls.{name}", f"Model.{name}"]},
                 "class": {"method": [f"self.{name}", f"Model.{name}"],
                           "class": [f"cls.{name}"]}}[kind]
        if isinstance(forms, dict):
            forms = forms.get(self.context, [f"Model.{name}"])
        return forms[int(self.extra.integers(len(forms)))] if forms else None

    def literal(self, shape: tuple) -> str:
        values = np.round(self.extra.uniform(-1.0, 1.0, size=shape), 2)
        return f"{float(values):.2f}" if shape == () else f"frozen({values.tolist()})"

    def model(self, members: list[str]) -> list[str]:
        """The class of the method form: class attributes, an __init__ setting the object's
        (read-only arrays: a write into one fails in the primal), then `members`."""
        lines = ["class Model:", f"    scale = {self.literal(())}",
                 f"    B = {self.literal((3,))}", "", "    def __init__(self):"]
        lines += [f"        self.{a} = {value}" for a, (_, value) in self.members.items()]
        return lines + [""] + indent(members)

    # -- the program ------------------------------------------------------------------------
    def helper(self, kind: str = "function"):
        """A helper of one or two arguments returning one value, callable in expressions:
        a function, or in the method form a method, staticmethod or classmethod of Model."""
        shapes = [self.pick(SHAPES) for _ in range(int(self.rng.integers(1, 3)))]
        result = self.pick(SHAPES)
        params = ["a", "b"][:len(shapes)]
        env = dict(zip(params, shapes, strict=True))
        env.update(self.attributes(kind))
        name = self.fresh("g")
        first = {"method": ["self"], "class": ["cls"]}.get(kind, [])
        lines = {"static": ["@staticmethod"], "class": ["@classmethod"]}.get(kind, [])
        lines += [f"def {name}({', '.join(first + params)}):"]
        outer, self.context, self.in_helper = self.context, kind, True
        lines += indent(self.block(env, 0, int(self.rng.integers(0, 3))))
        self.in_helper = False
        lines += [f"    return {self.expr(env, result)}", ""]
        self.context = outer
        self.helpers.append((name, shapes, result, kind))
        return lines

    def program(self) -> tuple[str, list]:
        """(module source, argument specs): a spec is a shape, or "int" for `n`. In the
        method form (`METHODS` of the programs) `f` is the method `loss` of an object (or,
        one in four, a classmethod of its class) and the helpers are its methods."""
        method = self.extra.random() < METHODS
        if method:
            self.context = "class" if self.extra.random() < 0.25 else "method"
            self.members = {f"W{k}": (shape, self.literal(shape)) for k, shape in
                            enumerate(SHAPES[int(self.extra.integers(len(SHAPES)))]
                                      for _ in range(int(self.extra.integers(1, 4))))}
        kinds = ["static", "class"] + (["method"] if self.context == "method" else [])
        head = []
        for _ in range(max(int(self.rng.integers(0, 3)), method)):
            head += self.helper(kinds[int(self.extra.integers(len(kinds)))] if method
                                else "function")
        args = {f"x{k}": self.pick(SHAPES) for k in range(int(self.rng.integers(1, 4)))}
        env = dict(args, **self.attributes(self.context), n="int")
        body = []
        if method:   # one call of a method at least
            name, shapes, result, kind = self.helpers[-1]
            body.append(f"{self.fresh()} = {self.call(name, kind)}"
                        f"({', '.join(self.expr(env, s) for s in shapes)})")
            env[body[-1].split()[0]] = result
        body += self.block(env, 2, int(self.rng.integers(2, 6)))
        body.append(f"return {self.result(env)}")
        source = ["import functools", "import itertools", "import operator", "",
                  "import numpy as np", "import scipy.special", "import scipy.stats", "", ""]
        if not method:
            source += head + self.helper_lines + ([""] if self.helper_lines else [])
            source += [f"def f({', '.join(args)}, n):"] + indent(body)
            return "\n".join(source) + "\n", list(args.values()) + ["int"]
        first = {"class": ["@classmethod", "def loss(cls"]}.get(self.context, ["def loss(self"])
        first[-1] += f", {', '.join(args)}, n):"
        source += FROZEN + self.helper_lines + ["", ""] + self.model(head + first + indent(body))
        source += ["", "", f"f = Model{'' if self.context == 'class' else '()'}.loss"]
        return "\n".join(source) + "\n", list(args.values()) + ["int"]


def indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]
