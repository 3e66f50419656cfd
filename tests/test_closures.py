"""Closures (issue 21): lambdas and nested `def`s inside the function differentiated,
functions passed to user helpers, `functools.partial`, conditional expressions; against
central differences and values by hand, compiled and as Python (the `jit` fixture), in
reverse and forward mode; and each form that is refused, with its line."""

import functools
import os

import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad.errors import RecursiveFunction, UnsupportedSyntax

HERE = os.path.basename(__file__)


def squares(x, a):
    sq = lambda v: a * v * v  # noqa: E731
    return np.sum(sq(x))


def nested_in_a_loop(x, a):
    def bump(v):
        w = np.sin(v) * a
        if a > 0.0:
            w = w + v
        return w
    s = 0.0
    for i in range(3):
        s = s + np.sum(bump(x * (i + 1.0)))
    return s


def late_binding(x, a):
    b = a
    scale = lambda v: b * v  # noqa: E731
    s = 0.0
    for _ in range(3):
        b = b * a             # each call reads b as it is then, as Python does
        s = s + np.sum(scale(x))
    return s


def defined_in_a_loop(x, a):
    s = 0.0
    for i in range(3):
        g = lambda v: v * i + a  # noqa: E731, B023 (called in the iteration it is made)
        s = s + np.sum(g(x) ** 2)
    return s


def default_taken_at_definition(x, a):
    c = a
    h = lambda v, c=c: v * c  # noqa: E731
    c = 10.0 * a              # h keeps the c it was defined with
    return np.sum(h(x)) + c


def closures_calling_closures(x, a):
    inner = lambda v: np.tanh(a * v)  # noqa: E731

    def outer(v):
        twice = lambda u: inner(u) * 2.0  # noqa: E731
        return twice(v) + inner(v * v)
    return np.sum(outer(x))


def apply(f, v):
    return f(v) + f(2.0 * v)


def apply_twice(f, v):
    return apply(f, f(v))


def through_helpers(x, a):
    sq = lambda v: a * v * v  # noqa: E731
    return np.sum(apply(sq, x)) + np.sum(apply_twice(lambda v: np.sin(v) * a, x)) + \
        np.sum(apply(np.cos, x)) + np.sum(apply(v=x, f=sq))


def affine(w, v, shift=0.0, scale=1.0):
    return scale * (w * v) + shift


def with_partials(x, a):
    p = functools.partial(affine, a, scale=3.0)
    q = functools.partial(p, shift=a * a)
    a = 2.0 * a               # p and q keep the a they were made with
    return np.sum(p(x)) + np.sum(q(x)) + np.sum(apply(functools.partial(affine, a), x))


HALF_AFFINE = functools.partial(affine, 0.5, shift=1.0)


def with_a_module_partial(x):
    return np.sum(HALF_AFFINE(x) ** 2)


def conditional_everywhere(x, a):
    pick = lambda v: v * a if a > 0.5 else v - a  # noqa: E731
    y = pick(x) if a < 2.0 else x
    s = 0.0
    for i in range(3):
        s = s + (np.sum(y) if i % 2 == 0 else np.sum(y * y))
    return s


def keywords_and_constant_defaults(x, a):
    k = lambda v, s=2.0, t=-1.0: v * s + t * a  # noqa: E731
    return np.sum(k(x)) + np.sum(k(v=x, s=3.0)) + np.sum(k(x, t=a))


def doubled(f, v):
    g = lambda u: f(u) * 2.0  # noqa: E731   (reads the function its helper was passed)
    return g(v) + f(v)


def helpers_taking_functions(x, a):
    p = functools.partial(doubled, np.sin)
    return np.sum(p(x * a)) + np.sum(doubled(lambda v: v * a, x))


CASES = [squares, nested_in_a_loop, late_binding, defined_in_a_loop,
         default_taken_at_definition, closures_calling_closures, through_helpers,
         with_partials, conditional_everywhere, keywords_and_constant_defaults,
         helpers_taking_functions]


@pytest.fixture
def x():
    return np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("fun", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("a", [0.8, 1.7])
def test_against_differences(fun, a, jit, x):
    value, grads = srcgrad.value_and_grad(fun, wrt=(0, 1), jit=jit)(x, a)
    assert value == pytest.approx(fun(x, a))
    assert_grad(fun, grads, (x, a), [0, 1])


@pytest.mark.parametrize("fun", CASES, ids=lambda f: f.__name__)
def test_forward_mode_against_differences(fun, jit, x):
    a, tx, ta, eps = 1.7, np.array([0.5, -1.0, 2.0]), 0.3, 1e-6
    value, dvalue = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(x, a, (tx, ta))
    want = (fun(x + eps * tx, a + eps * ta) - fun(x - eps * tx, a - eps * ta)) / (2 * eps)
    assert value == pytest.approx(fun(x, a))
    assert dvalue == pytest.approx(want, rel=1e-6)


def test_values_by_hand(jit, x):
    a = 1.5
    # d/dx sum(a x^2) = 2 a x; d/da = sum(x^2): a captured, and the parameter it came from
    gx, ga = srcgrad.grad(squares, wrt=(0, 1), jit=jit)(x, a)
    np.testing.assert_allclose(gx, 2 * a * x)
    assert ga == pytest.approx(np.sum(x * x))
    # sum over k = 1..3 of a^k sum(x): the calls read b = a^2, a^3, a^4
    gx, ga = srcgrad.grad(late_binding, wrt=(0, 1), jit=jit)(x, a)
    np.testing.assert_allclose(gx, (a ** 2 + a ** 3 + a ** 4) * np.ones(3))
    assert ga == pytest.approx((2 * a + 3 * a ** 2 + 4 * a ** 3) * np.sum(x))
    # sum(x c) + c' with c = a at the definition and c' = 10 a
    gx, ga = srcgrad.grad(default_taken_at_definition, wrt=(0, 1), jit=jit)(x, a)
    np.testing.assert_allclose(gx, a * np.ones(3))
    assert ga == pytest.approx(np.sum(x) + 10.0)
    # 3 (a x) + (3 a x + a^2), and affine(2a, x) + affine(2a, 2x) = 6 a x
    gx, ga = srcgrad.grad(with_partials, wrt=(0, 1), jit=jit)(x, a)
    np.testing.assert_allclose(gx, (3 * a + 3 * a + 6 * a) * np.ones(3))
    assert ga == pytest.approx(np.sum(6 * x) + 3 * 2 * a + np.sum(6 * x))


def test_a_module_level_partial(jit, x):
    got = srcgrad.grad(with_a_module_partial, jit=jit)(x)
    np.testing.assert_allclose(got, 2 * (0.5 * x + 1.0) * 0.5)


def sines_through_a_helper(x, a):
    return np.sum(apply(lambda v: a * np.sin(v), x))


def test_hessian_vector_product(jit, x):
    a, u = 1.3, np.array([1.0, -2.0, 0.5])
    # the hessian of sum(a x^2) is 2a I; of sum(a sin x + a sin 2x), diag(-a sin x - 4a sin 2x)
    np.testing.assert_allclose(srcgrad.hvp(squares, jit=jit)(x, a, u), 2 * a * u)
    got = srcgrad.hvp(sines_through_a_helper, jit=jit)(x, a, u)
    np.testing.assert_allclose(got, (-a * np.sin(x) - 4 * a * np.sin(2 * x)) * u)


def test_the_source_calls_the_lifted_closure():
    source = srcgrad.grad(squares, wrt=(0, 1)).source
    assert "def sq_vjp(a, v," in source and "sq_vjp(a, x," in source, source
    assert "# line" in source and "sq = lambda v: a * v * v" in source


# ---- refused, at the user's line ----
def writes_into_a_capture(x):
    buf = np.zeros(3)

    def put(v):
        buf[0] = v
        return v
    put(x[0])
    return np.sum(buf * x)


def with_nonlocal(x):
    t = 0.0

    def add(v):
        nonlocal t
        t = t + v
        return t
    return add(x)


def returns_a_closure(x):
    f = lambda v: v * x  # noqa: E731
    return f


def stores_a_closure(x):
    fs = (lambda v: v * x, np.sin)
    return fs[0](x)


def calls_itself(x):
    def fact(n, v):
        return v if n == 0 else v * fact(n - 1, v)
    return fact(3, x)


def apply_forever(f, v):
    return apply_forever(f, f(v))


def passes_itself_around(x):
    return apply_forever(lambda v: v * 2.0, x)


def to_a_library_function(x):
    return np.sum(np.apply_along_axis(lambda r: r * r, 0, x))


def bound_twice(x):
    f = lambda v: v * 2.0  # noqa: E731
    f = lambda v: v * 3.0  # noqa: E731
    return f(x)


def defined_in_an_annotation_block(x):
    with srcgrad.grad_of(x) as dx:
        clip = lambda v: np.clip(v, -1.0, 1.0)  # noqa: E731
        dx = clip(dx)
    return x * 2.0


def imports_at_its_top(x):
    import math as m

    import scipy.special
    from numpy import exp
    from scipy.special import logsumexp as lse
    return lse(x) + np.sum(scipy.special.expit(x)) * m.pi + exp(x[0])


def helper_that_imports(v):
    from scipy.special import expit
    return expit(v) * v


def calls_a_helper_that_imports(x):
    return np.sum(helper_that_imports(x))


def imports_in_a_branch(x):
    if x[0] > 0.0:
        from scipy.special import expit
        return np.sum(expit(x))
    return np.sum(x)


def test_imports_at_the_top_of_a_body_bind_their_names(jit, x):
    """An import at the top level of a differentiated function (or of a helper it calls)
    binds its names as Python does: logsumexp's gradient is the softmax, expit's is
    s (1 - s)."""
    s = 1.0 / (1.0 + np.exp(-x))
    by_hand = np.exp(x) / np.sum(np.exp(x)) + s * (1.0 - s) * np.pi
    by_hand[0] += np.exp(x[0])
    np.testing.assert_allclose(srcgrad.grad(imports_at_its_top, jit=jit)(x), by_hand,
                               rtol=1e-12)
    g = srcgrad.grad(calls_a_helper_that_imports, jit=jit)(x)
    np.testing.assert_allclose(g, s + x * s * (1.0 - s), rtol=1e-12)
    assert_grad(calls_a_helper_that_imports, (g,), (x,), [0])


@pytest.mark.parametrize("fun,error,fragment,line", [
    (writes_into_a_capture, UnsupportedSyntax, "writes into 'buf', which it captures",
     "buf[0] = v"),
    (with_nonlocal, UnsupportedSyntax, "'nonlocal' cannot be differentiated", "nonlocal t"),
    (returns_a_closure, UnsupportedSyntax, "can only be called", "return f"),
    (stores_a_closure, UnsupportedSyntax, "can only be called", "fs = (lambda v: v * x"),
    (calls_itself, RecursiveFunction, "fact calls itself", "def fact(n, v):"),
    (passes_itself_around, RecursiveFunction, "apply_forever passes a function to itself",
     "return apply_forever(f, f(v))"),
    (to_a_library_function, UnsupportedSyntax, "not to a library function",
     "np.apply_along_axis(lambda r: r * r"),
    (bound_twice, UnsupportedSyntax, "bound to a function here and to something else",
     "f = lambda v: v * 2.0"),
    (defined_in_an_annotation_block, UnsupportedSyntax, "inside a 'with' block",
     "clip = lambda v: np.clip"),
    (imports_in_a_branch, UnsupportedSyntax, "imports inside a differentiated function",
     "from scipy.special import expit"),
])
def test_refused(fun, error, fragment, line):
    with pytest.raises(error) as info:
        srcgrad.grad(fun, jit=False)(np.array([0.5, 1.0, 2.0]))
    message = str(info.value)
    assert f"{HERE}:" in message and fragment in message and line in message, message
