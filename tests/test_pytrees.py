"""Containers of arrays as `wrt` arguments (issue 21): a tuple, list, dict, NamedTuple or
dataclass, nested; the gradient has the argument's structure. Against gradients by hand
or central differences, compiled and as Python."""

import dataclasses
import os
from typing import NamedTuple

import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad.checks import GradientMismatch, check_grad, numerical_grad
from srcgrad.errors import SrcgradError, UnsupportedSyntax


def linear_loss(params, X, y):
    r = X @ params["W"] + params["b"] - y
    return np.sum(r ** 2)


@pytest.fixture
def data(rng):
    return rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=3)


def test_dict_linear_model_by_hand(jit, data):
    X, y, W = data
    params = {"W": W, "b": 0.25}
    g = srcgrad.grad(linear_loss, jit=jit)(params, X, y)
    r = X @ W + 0.25 - y
    assert type(g) is dict and list(g) == ["W", "b"]
    np.testing.assert_allclose(g["W"], 2 * X.T @ r, rtol=1e-12)
    assert type(g["b"]) is float and g["b"] == pytest.approx(2 * r.sum(), rel=1e-12)
    value, g2 = srcgrad.value_and_grad(linear_loss, jit=jit)(params, X, y)
    assert value == pytest.approx(np.sum(r ** 2), rel=1e-12)
    np.testing.assert_allclose(g2["W"], g["W"], rtol=1e-12)


@pytest.mark.compiled
@pytest.mark.skipif(os.environ.get("SRCGRAD_DISABLE_JIT", "") not in ("", "0"),
                    reason="SRCGRAD_DISABLE_JIT is set")
def test_dict_compiled(data):
    """Done means (issue 21): grad(loss)(params) with a dict of arrays returns a dict,
    compiled."""
    X, y, W = data
    g = srcgrad.grad(linear_loss, jit=True)
    out = g({"W": W, "b": np.array([0.5])}, X, y)
    assert type(out) is dict and out["b"].shape == (1,)
    assert g._specialized and next(iter(g._specialized.values())).forms.compiled


def unpack3(abc, s):
    a, b, c = abc
    return np.sum(a * b) * s + c ** 2 * len(abc)


@pytest.mark.parametrize("kind", [tuple, list])
def test_tuple_and_list_unpacking(jit, kind, rng):
    a, b = rng.normal(size=4), rng.normal(size=4)
    g = srcgrad.grad(unpack3, jit=jit)(kind([a, b, 1.5]), 2.0)
    assert type(g) is kind and len(g) == 3
    np.testing.assert_allclose(g[0], 2.0 * b, rtol=1e-12)
    np.testing.assert_allclose(g[1], 2.0 * a, rtol=1e-12)
    assert type(g[2]) is float and g[2] == pytest.approx(2 * 1.5 * 3)


def indexed(abc):
    total = abc[0][0] * abc[-1]
    for v in abc:
        total = total + np.sum(v ** 2)
    return total


def test_index_and_for_unrolled(jit, rng):
    a = rng.normal(size=3)
    g = srcgrad.grad(indexed, jit=jit)((a, 0.7))
    want = [numerical_grad(lambda x: indexed((x, 0.7)), (a,), 0),
            numerical_grad(lambda c: indexed((a, c)), (0.7,), 0)]
    np.testing.assert_allclose(g[0], want[0], rtol=1e-6)
    assert g[1] == pytest.approx(want[1], rel=1e-6)


class Params(NamedTuple):
    W: np.ndarray
    b: float


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray


def attr_loss(p, X):
    return np.sum(np.tanh(X @ p.W + p.b))


def test_namedtuple(jit, rng):
    X, W = rng.normal(size=(4, 3)), rng.normal(size=3)
    g = srcgrad.grad(attr_loss, jit=jit)(Params(W, 0.3), X)
    assert type(g) is Params
    s = 1 - np.tanh(X @ W + 0.3) ** 2
    np.testing.assert_allclose(g.W, X.T @ s, rtol=1e-12)
    assert g.b == pytest.approx(s.sum(), rel=1e-12)


def test_dataclass(jit, rng):
    X, W, bias = rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=4)
    g = srcgrad.grad(attr_loss, jit=jit)(Layer(W, bias), X)
    assert type(g) is Layer
    s = 1 - np.tanh(X @ W + bias) ** 2
    np.testing.assert_allclose(g.W, X.T @ s, rtol=1e-12)
    np.testing.assert_allclose(g.b, s, rtol=1e-12)


def mlp(params, x):
    W1, b1 = params["layer1"]
    h = np.tanh(params["layer0"][0] @ x + params["layer0"][1])
    return np.sum((W1 @ h + b1) ** 2) + params["scale"] * np.sum(x)


def test_nested_dict_of_tuples(jit, rng):
    params = {"layer0": (rng.normal(size=(3, 2)), rng.normal(size=3)),
              "layer1": (rng.normal(size=(2, 3)), rng.normal(size=2)), "scale": 0.5}
    x = rng.normal(size=2)
    g = srcgrad.grad(mlp, jit=jit)(params, x)
    assert list(g) == ["layer0", "layer1", "scale"] and type(g["layer1"]) is tuple
    check_grad(mlp, params, x, jit=jit)   # leaf by leaf against central differences
    assert g["scale"] == pytest.approx(np.sum(x), rel=1e-12)


def _double(x):
    return 2.0 * x


@srcgrad.adjoint(_double)
def _double_wrong(dy, y, x):
    return 3.0 * dy   # wrong on purpose: check_grad must see it


def test_check_grad_sees_a_wrong_leaf(rng):
    def f(p):
        return np.sum(_double(p["a"])) + np.sum(p["b"] ** 2)

    with pytest.raises(GradientMismatch, match="'p_a'"):
        check_grad(f, {"a": rng.normal(size=2), "b": rng.normal(size=2)}, jit=False)


def two(p, q):
    return np.sum(p["a"] * q[0]) + np.sum(p["a"] ** 2) * q[1]


def test_wrt_two_containers(jit, rng):
    p, q = {"a": rng.normal(size=3)}, (rng.normal(size=3), 0.4)
    gp, gq = srcgrad.grad(two, wrt=(0, 1), jit=jit)(p, q)
    np.testing.assert_allclose(gp["a"], q[0] + 2 * p["a"] * q[1], rtol=1e-12)
    np.testing.assert_allclose(gq[0], p["a"], rtol=1e-12)
    assert gq[1] == pytest.approx(np.sum(p["a"] ** 2), rel=1e-12)


def test_vjp_pullback_has_the_structure(jit, data):
    X, y, W = data
    value, pullback = srcgrad.vjp(linear_loss, jit=jit)({"W": W, "b": 0.25}, X, y)
    r = X @ W + 0.25 - y
    assert value == pytest.approx(np.sum(r ** 2))
    g = pullback(3.0)
    np.testing.assert_allclose(g["W"], 3.0 * 2 * X.T @ r, rtol=1e-12)
    assert type(g["b"]) is float and g["b"] == pytest.approx(3.0 * 2 * r.sum(), rel=1e-12)


def test_jvp_tangent_of_the_structure(jit, data):
    X, y, W = data
    params, tangent = {"W": W, "b": 0.25}, {"W": np.array([1.0, -2.0, 0.5]), "b": 0.3}
    value, d = srcgrad.jvp(linear_loss, jit=jit)(params, X, y, tangent)
    h = 1e-6
    moved = [linear_loss({k: params[k] + s * h * tangent[k] for k in params}, X, y)
             for s in (1, -1)]
    assert value == pytest.approx(linear_loss(params, X, y))
    assert d == pytest.approx((moved[0] - moved[1]) / (2 * h), rel=1e-6)
    with pytest.raises(SrcgradError, match="must have its structure"):
        srcgrad.jvp(linear_loss, jit=jit)(params, X, y, (W, 0.3))


def test_hvp_of_the_structure(jit, rng):
    def f(p):
        return np.sum(p["a"] ** 3) * p["c"] + np.sum(np.sin(p["a"]))

    p, v = {"a": rng.normal(size=3), "c": 1.3}, {"a": rng.normal(size=3), "c": -0.4}
    hv = srcgrad.hvp(f, jit=jit)(p, v)
    grad = srcgrad.grad(f, jit=False)
    h = 1e-5
    ups = [grad({k: p[k] + s * h * v[k] for k in p}) for s in (1, -1)]
    assert type(hv) is dict
    np.testing.assert_allclose(hv["a"], (ups[0]["a"] - ups[1]["a"]) / (2 * h), rtol=1e-5)
    assert hv["c"] == pytest.approx((ups[0]["c"] - ups[1]["c"]) / (2 * h), rel=1e-5)


def test_hessian_refuses_containers():
    with pytest.raises(SrcgradError, match="no one nesting of blocks"):
        srcgrad.hessian(lambda p: np.sum(p[0] ** 2) + 0.0)((np.ones(2), 1.0))


def whole(params):
    return linear_loss(params, np.ones((2, 2)), np.ones(2))


def computed(params, k):
    return np.sum(params[k])


def written(params):
    params["W"] = params["W"] * 2
    return np.sum(params["W"])


def iterated(params):
    total = 0.0
    for v in params:
        total = total + v
    return total


def aliased(params):
    q = params
    return np.sum(q["W"])


def missing(params):
    return np.sum(params["V"])


def jumps(abc):
    total = 0.0
    for v in abc:
        if np.sum(v) > 0:
            break
        total = total + np.sum(v)
    return total


@pytest.mark.parametrize("fun, arg, what", [
    (whole, {"W": np.ones(2), "b": 0.0}, "using it whole"),
    (computed, {"W": np.ones(2)}, "computed at run time"),
    (written, {"W": np.ones(2)}, "writing into it"),
    (iterated, Layer(np.ones(2), np.ones(2)), "iterating a dataclass"),
    (aliased, {"W": np.ones(2)}, "using it whole"),
    (missing, {"W": np.ones(2)}, "the key 'V'"),
    (jumps, (np.ones(2), np.ones(2)), "`break`"),
])
def test_refused_uses(jit, fun, arg, what):
    args = (arg, "W") if fun is computed else (arg,)
    with pytest.raises(UnsupportedSyntax, match=what) as info:
        srcgrad.grad(fun, jit=jit)(*args)
    assert "test_pytrees.py:" in str(info.value) and "differentiated entry by entry" in \
        str(info.value)


def test_non_wrt_tuple_stays_a_value(jit):
    def f(x, shape):
        return np.sum(x * np.ones(shape))
    assert srcgrad.grad(f, jit=jit)(2.0, (2, 3)) == pytest.approx(6.0)


def test_transform_of_a_transform_refuses_containers():
    def f(p):
        return p[0] ** 3 * p[1]

    with pytest.raises(SrcgradError, match="takes arrays, not containers"):
        srcgrad.grad(srcgrad.grad(f, jit=False), jit=False)((2.0, 1.0))


def test_int_leaf_is_named(jit):
    def f(p):
        return p["x"] * p["n"]

    with pytest.raises(SrcgradError, match="'p_n'.*integer"):
        srcgrad.grad(f, jit=jit)({"x": 2.0, "n": 3})


def layers(params, n):
    h = params["x"]
    for i in range(n):
        h = np.tanh(h * params["w"]) + i
    return np.sum(h)


def test_with_a_static_argument(jit, rng):
    params = {"x": rng.normal(size=3), "w": 0.8}
    g = srcgrad.grad(layers, static="n", jit=jit)(params, 3)
    check_grad(layers, params, 3, static="n", jit=jit)
    assert type(g) is dict and type(g["w"]) is float


def test_leaf_name_clash_refused(jit):
    def f(p, p_a):
        return np.sum(p["a"]) * p_a

    with pytest.raises(UnsupportedSyntax, match="'p_a' that clashes"):
        srcgrad.grad(f, jit=jit)({"a": np.ones(2)}, 2.0)


def batch_loss(w, batch, shape):
    return np.sum((batch["X"] @ w - batch["y"]) ** 2) + np.sum(np.zeros(shape))


def whole_batch(w, coeffs):
    return np.sum(w * np.array(coeffs))


def test_containers_not_differentiated(jit, rng):
    """A dict of float arrays that is only read by key is flattened too (so it compiles);
    a tuple of ints (a shape), or one the function uses whole, stays as it is."""
    X, y, w = rng.normal(size=(5, 2)), rng.normal(size=5), rng.normal(size=2)
    g = srcgrad.grad(batch_loss, jit=jit)(w, {"X": X, "y": y}, (2, 2))
    np.testing.assert_allclose(g, 2 * X.T @ (X @ w - y), rtol=1e-12)
    g = srcgrad.grad(whole_batch, jit=False)(w, (1.5, 2.5))
    np.testing.assert_allclose(g, [1.5, 2.5])


# ---- dict literals inside the function ----


def local_dict_layer(w, b, x):
    layer = {"W": w, "b": b, "act": {"scale": 2.0}}
    h = layer["act"]["scale"] * np.tanh(layer["W"] @ x + layer["b"])
    return np.sum(h) + len(layer)


def test_local_dict_literal_by_hand_and_differences(jit, rng):
    # at W = 0: h = 2 tanh(b), so d/db = 2 (1 - tanh(b)^2) and d/dW = d/db x^T
    b, x = np.array([0.3, -0.4]), np.array([1.0, 2.0, -1.0])
    dw, db = srcgrad.grad(local_dict_layer, wrt=(0, 1), jit=jit)(np.zeros((2, 3)), b, x)
    np.testing.assert_allclose(db, 2.0 * (1.0 - np.tanh(b) ** 2))
    np.testing.assert_allclose(dw, np.outer(db, x))
    w = rng.standard_normal((2, 3))
    dw, db = srcgrad.grad(local_dict_layer, wrt=(0, 1), jit=jit)(w, b, x)
    np.testing.assert_allclose(dw, numerical_grad(local_dict_layer, (w, b, x), 0), rtol=1e-6)
    np.testing.assert_allclose(db, numerical_grad(local_dict_layer, (w, b, x), 1), rtol=1e-6)


def dict_built_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        terms = {"square": x ** 2, "shift": x * i}
        s = s + np.sum(terms["square"] - terms["shift"])
    return s


def test_local_dict_in_a_loop_and_forward_mode(jit):
    # s = n sum(x^2) - sum(x) n(n-1)/2: ds/dx = 2 n x - n(n-1)/2
    x, n = np.array([0.5, -1.5]), 3
    np.testing.assert_allclose(srcgrad.grad(dict_built_in_a_loop, jit=jit)(x, n),
                               2 * n * x - 3.0)
    _, slope = srcgrad.jvp(dict_built_in_a_loop, jit=jit)(x, n, np.array([1.0, 0.0]))
    assert slope == pytest.approx(2 * n * x[0] - 3.0)


def dict_returned_whole(x):
    p = {"a": x}
    return p


def dict_computed_key(x, k):
    p = {"a": x, "b": 2.0 * x}
    return np.sum(p[k])


def dict_rebound(x):
    p = {"a": x}
    p = {"a": 2.0 * x}
    return np.sum(p["a"])


@pytest.mark.parametrize("fun, args, what", [
    (dict_returned_whole, (np.ones(2),), "using it whole"),
    (dict_computed_key, (np.ones(2), "a"), "computed at run time"),
    (dict_rebound, (np.ones(2),), r"dict literals \(but one of constant keys assigned once"),
])
def test_local_dict_uses_refused(fun, args, what):
    with pytest.raises(UnsupportedSyntax, match=what) as info:
        srcgrad.grad(fun, jit=False)(*args)
    assert "test_pytrees.py:" in str(info.value)


# ---- dicts built by calling dict: a literal where the keys are in the source ----

KEYS = ("W", "b")


def dict_calls(w, b, x):
    layer = dict(W=w, b=b)
    scales = dict(zip(KEYS, [2.0, w[0, 0]], strict=True))
    pairs = dict([("shift", b * b), ("x", x)])
    h = scales["W"] * np.tanh(layer["W"] @ pairs["x"] + layer["b"])
    return np.sum(h) * scales["b"] + np.sum(pairs["shift"])


def test_dict_calls_by_hand_and_differences(jit, rng):
    b, x = np.array([0.3, -0.4]), np.array([1.0, 2.0, -1.0])
    # by hand at W = 0: f = 2 sum(tanh(b)) W_00 + sum(b^2), so df/db = 2 b and
    # df/dW = 2 sum(tanh(b)) at [0, 0] (the products with W_00 = 0 vanish elsewhere)
    dw, db = srcgrad.grad(dict_calls, wrt=(0, 1), jit=jit)(np.zeros((2, 3)), b, x)
    np.testing.assert_allclose(db, 2 * b)
    want = np.zeros((2, 3))
    want[0, 0] = 2 * np.sum(np.tanh(b))
    np.testing.assert_allclose(dw, want)
    w = rng.standard_normal((2, 3))
    dw, db = srcgrad.grad(dict_calls, wrt=(0, 1), jit=jit)(w, b, x)
    np.testing.assert_allclose(dw, numerical_grad(dict_calls, (w, b, x), 0), rtol=1e-6)
    np.testing.assert_allclose(db, numerical_grad(dict_calls, (w, b, x), 1), rtol=1e-6)


def test_wrt_a_dict_a_caller_built_with_dict_of_zip(data):
    X, y, W = data
    params = dict(zip(("W", "b"), (W, 0.25)))   # noqa: B905 (as users write it)
    g = srcgrad.grad(linear_loss, jit=False)(params, X, y)
    r = X @ W + 0.25 - y   # by hand: dW = 2 X^T r, db = 2 sum(r)
    np.testing.assert_allclose(g["W"], 2 * X.T @ r)
    assert g["b"] == pytest.approx(2 * np.sum(r))


def dict_of_zip_of_names(x):
    keys, values = ["a", "b"], [x, 2.0 * x]
    d = dict(zip(keys, values))   # noqa: B905
    return np.sum(d["a"] * d["b"])


def test_a_dict_call_whose_keys_are_not_in_the_source_is_refused():
    # (not a literal: the zip of two names, a list of values, has no rule)
    with pytest.raises(srcgrad.MissingRule, match=r"test_pytrees.py:\d+: zip has no "
                                                  r"gradient rule(.|\n)*d = dict\(zip"):
        srcgrad.grad(dict_of_zip_of_names, jit=False)(np.ones(2))


# ---- writes into a local dict at constant keys (issue 20): its entry's name bound again ----


def dict_written(x):
    d = {"a": x * 2}
    d["a"] = d["a"] + 1
    d["b"] = x
    d["a"] += x
    return np.sum(d["a"] * d["b"])


def dict_written_in_loops(x):
    d = {"s": x, "p": x * 0.0 + 1.0}
    for i in range(3):
        d["s"] = d["s"] * x
        if i > 0:
            d["p"] += d["s"]
    d["q"] = d["p"] * 2.0
    for k in d:
        d[k] = d[k] * x
    return np.sum(d["s"] + d["p"] + d["q"])


def dict_updated(x):
    d = {"a": x, "b": 2.0 * x}
    d.update({"a": d["b"], "b": d["a"]})   # (a swap: update reads both first)
    d.update(c=np.sin(x))
    d["a"], d["e"] = d["a"] * d["c"], d["b"]
    return np.sum(d["a"] * 3.0 + d["b"] + d["e"] * len(d))


def nested_dict_written(x):
    d = {"a": {"u": x * 1.0, "v": 2.0 * x}, "b": x}
    d["a"]["u"] *= d["b"]
    d["a"]["v"] = d["a"]["v"] + d["a"]["u"]
    return np.sum(d["a"]["u"] + d["a"]["v"])


def test_writes_into_a_local_dict_by_hand_and_differences(jit):
    x = np.array([0.5, 2.0, -1.5])
    # sum((3x + 1) x): 6x + 1
    np.testing.assert_allclose(srcgrad.grad(dict_written, jit=jit)(x), 6 * x + 1)
    # s = x^5, p = x + x^4 + x^5, q = 2p: 3x + 3x^4 + 4x^5
    np.testing.assert_allclose(srcgrad.grad(dict_written_in_loops, jit=jit)(x),
                               3 + 12 * x ** 3 + 20 * x ** 4)
    # a = 2x sin(x), b = x, e = x, 4 entries: 6x sin(x) + 5x
    np.testing.assert_allclose(srcgrad.grad(dict_updated, jit=jit)(x),
                               6 * np.sin(x) + 6 * x * np.cos(x) + 5)
    # u = x^2, v = 2x + x^2: 4x + 2
    np.testing.assert_allclose(srcgrad.grad(nested_dict_written, jit=jit)(x), 4 * x + 2)
    for fun in (dict_written, dict_written_in_loops, dict_updated, nested_dict_written):
        assert srcgrad.value_and_grad(fun, jit=jit)(x)[0] == pytest.approx(fun(x))
        assert_grad(fun, (srcgrad.grad(fun, jit=jit)(x),), (x,), [0])
    _, slope = srcgrad.jvp(dict_written, jit=jit)(x, np.array([0.0, 1.0, 0.0]))
    assert slope == pytest.approx(6 * x[1] + 1)


def test_a_written_dict_reads_as_the_users_names():
    source = srcgrad.grad(dict_written, jit=False).source
    assert "d_a_1 = d_a + 1" in source and "d_b = x" in source
    assert "# grad of line" in source and 'd["a"] += x' in source


def dict_entry_shares_x(x):
    d = {"a": x}
    d["a"] += 1.0
    return np.sum(d["a"] ** 2)


def options_written(x, opts):
    opts["s"] = opts["s"] * 2.0
    return np.sum(x * opts["s"])


def test_writes_never_change_the_callers_objects(jit):
    x = np.array([0.5, 2.0])
    # d["a"] is x: `+=` changes the caller's x in Python, refused as `y = x; y += 1` is
    with pytest.raises(SrcgradError, match="changes in place an array that another name") \
            as info:
        srcgrad.grad(dict_entry_shares_x, jit=jit)(x)
    assert 'd["a"] += 1.0' in str(info.value)   # (the user's line: d_a is not in it)
    np.testing.assert_array_equal(x, [0.5, 2.0])
    # a dict argument not differentiated: the gradient of what Python computes (s twice
    # as large), and the caller's dict as it was (copied on entry; numba takes no dict)
    opts = {"s": 1.5}
    np.testing.assert_allclose(srcgrad.grad(options_written, jit=False)(x, opts), [3.0, 3.0])
    assert opts == {"s": 1.5}


def dict_key_added_in_a_branch(x):
    d = {"a": x}
    if np.sum(x) > 0:
        d["b"] = x
    return np.sum(d["a"])


def dict_key_added_in_a_loop(x):
    d = {"a": x}
    for i in range(2):
        d["b"] = x * i
    return np.sum(d["a"] + d["b"])


def dict_key_added_by_plus(x):
    d = {"a": x}
    d["b"] += x
    return np.sum(d["a"])


def dict_key_read_before_added(x):
    d = {"a": x}
    d["b"] = d["b"] + x
    return np.sum(d["a"])


def dict_len_before_a_key_added(x):
    d = {"a": x}
    n = len(d)
    d["b"] = x
    return np.sum(d["a"]) * n


def dict_written_at_a_computed_key(x, k):
    d = {"a": x, "b": x}
    d[k] = x * 2.0
    return np.sum(d["a"])


def dict_entry_deleted(x):
    d = {"a": x, "b": x}
    del d["b"]
    return np.sum(d["a"])


def dict_setdefault(x):
    d = {"a": x}
    for _ in range(2):
        d.setdefault("b", x)   # (at a key that is there or not: refused)
    return np.sum(d["a"])


def dict_entry_replaced_by_a_dict(x):
    d = {"a": x}
    d["a"] = {"u": x}
    return np.sum(d["a"]["u"])


def dict_key_added_inside(x):
    d = {"a": {"u": x}}
    d["a"]["w"] = x
    return np.sum(d["a"]["u"])


def dict_nested_entry_replaced(x):
    d = {"a": {"u": x}, "b": x}
    d["a"] = x
    return np.sum(d["b"])


@pytest.mark.parametrize("fun, args, what", [
    (dict_key_added_in_a_branch, (np.ones(2),), "the key 'b' is added in a loop, a branch"),
    (dict_key_added_in_a_loop, (np.ones(2),), "the key 'b' is added in a loop, a branch"),
    (dict_key_added_by_plus, (np.ones(2),), "an augmented assignment"),
    (dict_key_read_before_added, (np.ones(2),), "its entry 'b' is read before it is added"),
    (dict_len_before_a_key_added, (np.ones(2),), "it is used whole .* before its last key"),
    (dict_written_at_a_computed_key, (np.ones(2), "a"), "computed at run time"),
    (dict_entry_deleted, (np.ones(2),), r"deleting its entries \(`del`\)"),
    (dict_setdefault, (np.ones(2),), "may or may not hold 'b' already"),
    (dict_entry_replaced_by_a_dict, (np.ones(2),), "writing a dict into one of its entries"),
    (dict_nested_entry_replaced, (np.ones(2),), "replacing an entry that is itself a container"),
    (written, ({"W": np.ones(2)},), "it is the caller's dict, which that would change"),
    (dict_key_added_inside, (np.ones(2),), "adding the key 'w' to a dict inside it"),
])
def test_writes_into_dicts_refused(fun, args, what):
    with pytest.raises(UnsupportedSyntax, match=what) as info:
        srcgrad.grad(fun, jit=False)(*args)
    assert "test_pytrees.py:" in str(info.value)


# ---- messages name an entry as the user wrote it (p['a'], not the flat name p_a) ----


def view_of_an_entry_written(p):
    q = p["a"]
    q[0] = 1.0
    return np.sum(p["a"] * q)


def view_of_a_local_entry_in_a_branch(x, c):
    d = {"a": x * 1.0}
    if c > 0:
        v = d["a"][1:]
    else:
        v = d["a"][:2]
    d["a"][0] = 5.0
    return np.sum(v * v)


def view_of_a_field_in_a_branch(layer, c):
    if c > 0:
        v = layer.W[1:]
    else:
        v = layer.W[:2]
    layer.W[0] = 5.0
    return np.sum(v * v)


@pytest.mark.parametrize("fun, args, said", [
    (view_of_an_entry_written, ({"a": np.ones(3)},),
     "'q' is a view of \"p['a']\"; write into \"p['a']\" itself"),
    (view_of_a_local_entry_in_a_branch, (np.ones(3), 1.0),
     "'v' is a view of \"d['a']\" read after a write into \"d['a']\""),
    (view_of_a_field_in_a_branch, (Layer(np.ones(3), np.ones(3)), 1.0),
     "'v' is a view of 'layer.W' read after a write into 'layer.W'"),
])
def test_messages_spell_entries_as_written(fun, args, said):
    # (check's and views' messages named the flat names p_a, d_a, layer_W)
    with pytest.raises(UnsupportedSyntax) as info:
        srcgrad.grad(fun, jit=False)(*args)
    assert said in str(info.value)
    assert "test_pytrees.py:" in str(info.value)
