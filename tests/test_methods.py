"""Methods calling methods: `self.predict(...)` inside `grad(model.loss)`, static and class
methods called through self, the class or cls, and `grad` of a classmethod; what cannot
be followed is refused at the user's line."""

import pickle
import re

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad import RecursiveFunction, UnsupportedSyntax


class Model:
    scale = 2.0

    def __init__(self, A, y):
        self.A, self.y = A, y

    def features(self, w):
        return np.tanh(self.A @ w)

    def predict(self, w, x):
        return self.features(w) * x

    def loss(self, w, x):
        return np.sum((self.predict(w, x) - self.y) ** 2)

    @property
    def offset(self):
        return self.y * 0.5

    def shifted(self, w):
        return np.sum(self.features(w) * self.offset)

    @staticmethod
    def cube(v):
        return v * v * v

    @classmethod
    def scaled_cube(cls, v):
        return cls.scale * cls.cube(v)

    def powers(self, w):
        return np.sum(self.cube(w) + Model.cube(w) + self.scaled_cube(w))


class Shifted(Model):
    def predict(self, w, x):
        return self.features(w) + x


def _loss(A, y, w, x):
    return np.sum((np.tanh(A @ w) * x - y) ** 2)


@pytest.fixture
def model():
    return Model(np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]]), np.array([0.1, -0.3, 0.2]))


W = np.array([0.5, -0.2])


def test_a_method_calling_methods_of_self(jit, model):
    g = srcgrad.grad(model.loss, jit=jit)
    t = np.tanh(model.A @ W)
    by_hand = model.A.T @ (2.0 * (t * 1.5 - model.y) * 1.5 * (1.0 - t ** 2))
    np.testing.assert_allclose(g(W, 1.5), by_hand)
    model.A = model.A[::-1].copy()   # the attribute a called method reads, at each call
    assert_grad(lambda w: _loss(model.A, model.y, w, 1.5), [g(W, 1.5)], [W], [0])


def test_forward_mode_and_hvp_of_a_method_calling_methods(jit, model):
    t = np.array([1.0, -2.0])
    value, tangent = srcgrad.jvp(model.loss, jit=jit)(W, 1.5, t)
    assert value == pytest.approx(_loss(model.A, model.y, W, 1.5))
    assert tangent == pytest.approx(slope(lambda w: _loss(model.A, model.y, w, 1.5), [W], [t]))
    hv = srcgrad.hvp(model.loss, jit=jit)(W, 1.5, t)
    grad = srcgrad.grad(lambda w: _loss(model.A, model.y, w, 1.5), jit=False)
    np.testing.assert_allclose(hv, (grad(W + 1e-6 * t) - grad(W - 1e-6 * t)) / 2e-6,
                               rtol=1e-5, atol=1e-8)


def test_a_method_transform_pickles(model):
    g = pickle.loads(pickle.dumps(srcgrad.grad(model.loss, jit=False)))
    t = np.tanh(g.obj.A @ W)
    by_hand = g.obj.A.T @ (2.0 * (t * 1.5 - g.obj.y) * 1.5 * (1.0 - t ** 2))
    np.testing.assert_allclose(g(W, 1.5), by_hand)
    h = pickle.loads(pickle.dumps(srcgrad.grad(Model.scaled_cube, jit=False)))
    assert h(1.5) == pytest.approx(6.0 * 1.5 ** 2)


def test_an_override_in_a_subclass_is_the_method_called(model):
    sub = Shifted(model.A, model.y)
    t = np.tanh(sub.A @ W)
    by_hand = sub.A.T @ (2.0 * (t + 1.5 - sub.y) * (1.0 - t ** 2))
    np.testing.assert_allclose(srcgrad.grad(sub.loss, jit=False)(W, 1.5), by_hand)


def test_a_property_is_read_at_each_call(model):
    g = srcgrad.grad(model.shifted, jit=False)
    t = np.tanh(model.A @ W)
    np.testing.assert_allclose(g(W), model.A.T @ (0.5 * model.y * (1.0 - t ** 2)))
    model.y = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(g(W), model.A.T @ (0.5 * model.y * (1.0 - t ** 2)))


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_static_and_class_methods(jit, model):
    # cube through self and through the class, scaled_cube through self and cls.cube
    np.testing.assert_allclose(srcgrad.grad(model.powers, jit=jit)(W),
                               (1.0 + 1.0 + Model.scale) * 3.0 * W ** 2)
    if not jit:
        assert srcgrad.grad(Model.scaled_cube, jit=False)(1.5) == pytest.approx(6.0 * 1.5 ** 2)
        assert srcgrad.grad(model.scaled_cube, jit=False)(-1.0) == pytest.approx(6.0)
        value, tangent = srcgrad.jvp(Model.scaled_cube, jit=False)(2.0, 1.0)
        assert (value, tangent) == pytest.approx((16.0, 24.0))


class Constants:
    B = np.array([0.5, -1.0])
    scale = 1.5

    @classmethod
    def g(cls, b):
        return cls.B

    @classmethod
    def g2(cls, b):
        return cls.scale

    def loss(self, x):
        return np.sum(self.g(x) * x)

    @classmethod
    def scaled_sum(cls, x):
        return cls.g2(x) * np.sum(x) + np.sum(_returns_global(x) * x)


_C = np.array([2.0, 0.25])


def _returns_global(b):
    return _C


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_a_helper_returning_a_class_value_or_global_as_it_is(jit):
    # the helpers' results do not depend on their argument: d/dx sum(B * x) is B
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(srcgrad.grad(Constants().loss, jit=jit)(x), Constants.B)
    np.testing.assert_allclose(srcgrad.grad(Constants.scaled_sum, jit=jit)(x),
                               Constants.scale + _C)


class Passes:
    B = np.array([0.5, -1.0])
    scale = 1.5

    @classmethod
    def mix(cls, a, b):
        return a * b + np.sin(a)

    @classmethod
    def outer(cls, x):
        return np.sum(cls.mix(x, cls.scale)) + np.sum(cls.mix(x, cls.B) ** 2)

    @classmethod
    def scaled(cls, x):
        return x * cls.B

    def loss(self, x):
        return self.outer(x)


class Other:
    B = np.array([3.0, -4.0])

    @classmethod
    def scaled(cls, x):
        return np.sin(x * cls.B)


def _times(a, b):
    return a * b


def _both_scaled(x):
    # two classes' `cls.B`, one name in each classmethod: each reads its own; a global
    # passed to a helper (jvp read it unbound too)
    return np.sum(Passes.scaled(x)) + np.sum(_times(Other.scaled(x), _C))


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_class_values_passed_to_calls_and_of_two_classes(jit):
    # fuzzer seeds 8600248 and 8600478: `cls.g1(a, cls.scale)` read a name the generated
    # module never bound (NameError in jvp); two classes' `cls.B` read one array
    x, t = np.array([0.3, 0.7]), np.array([1.0, -2.0])
    B, C = Passes.B, Other.B
    want = 1.5 + np.cos(x) + 2 * (B * x + np.sin(x)) * (B + np.cos(x))
    np.testing.assert_allclose(srcgrad.grad(Passes().loss, jit=jit)(x), want)
    assert_grad(Passes.outer, [want], [x], [0])
    value, tangent = srcgrad.jvp(Passes().loss, jit=jit)(x, t)   # (outer bound to Passes)
    assert value == pytest.approx(Passes.outer(x))
    assert tangent == pytest.approx(slope(Passes.outer, [x], [t]))
    want = B + np.cos(C * x) * C * _C
    np.testing.assert_allclose(srcgrad.grad(_both_scaled, jit=jit)(x), want)
    assert_grad(_both_scaled, [want], [x], [0])
    value, tangent = srcgrad.jvp(_both_scaled, jit=jit)(x, t)
    assert tangent == pytest.approx(want @ t)


def test_class_values_passed_to_calls_second_order():
    x, t = np.array([0.3, -0.7]), np.array([1.0, -2.0])
    B, s = Passes.B, np.sin(x)
    hessian = -s + 2 * (B + np.cos(x)) ** 2 - 2 * (B * x + s) * s   # (diagonal)
    np.testing.assert_allclose(srcgrad.hvp(Passes().loss, jit=False)(x, t), hessian * t)


class Counted:
    def __init__(self, n, k):
        self.n, self.k, self.w = n, k, np.array([1.5, -0.5])

    def terms(self, x):
        s = 0.0
        for i in range(self.n):
            s = s + np.sum(np.sin(x * i))
        return s + self.n * x[self.k]

    def loss(self, x):
        return self.terms(x) + np.sum(self.w * x)


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_int_attributes_as_loop_bounds_and_indices(jit):
    # self.n, self.k ints (a loop bound, an index): the view of self compiles with them
    model, x, t = Counted(3, 1), np.array([0.3, 0.7]), np.array([1.0, -2.0])
    want = sum(i * np.cos(i * x) for i in range(3)) + np.array([0.0, 3.0]) + model.w
    np.testing.assert_allclose(srcgrad.grad(model.loss, jit=jit)(x), want)
    assert_grad(lambda x: Counted(3, 1).loss(x), [want], [x], [0])
    value, tangent = srcgrad.jvp(model.terms, jit=jit)(x, t)
    assert value == pytest.approx(model.terms(x))
    assert tangent == pytest.approx(slope(model.terms, [x], [t]))


class Holder:
    def __init__(self, child):
        self.child = child

    def through(self, x):
        return self.child.loss(x)

    def loss(self, x):
        return self.through(x) ** 2 + np.sum(self.child.w * x)


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_a_method_of_an_object_self_holds(jit):
    # self.child.loss(x), through a method of self; Counted.loss calls self.terms, reads
    # ints (n, k) and an array (w) of the child
    holder, x, t = Holder(Counted(3, 1)), np.array([0.3, 0.7]), np.array([1.0, -2.0])
    inner = sum(i * np.cos(i * x) for i in range(3)) + np.array([0.0, 3.0]) + holder.child.w
    want = 2 * holder.through(x) * inner + holder.child.w
    g = srcgrad.grad(holder.loss, jit=jit)
    np.testing.assert_allclose(g(x), want)
    assert_grad(holder.loss, [want], [x], [0])
    value, tangent = srcgrad.jvp(holder.loss, jit=jit)(x, t)
    assert (value, tangent) == pytest.approx((holder.loss(x), want @ t))
    if not jit:   # the object child holds must stay of the class the code was made for
        holder.child = Model(np.ones((2, 2)), np.ones(2))
        with pytest.raises(srcgrad.SrcgradError, match="child held a Counted when the "
                                                       "transform was made"):
            g(x)


class Refused:
    def __init__(self):
        self.a = np.ones(2)
        self.act = np.tanh

    def caches(self, x):
        self.last = x
        return x

    def writes_into(self, x):
        self.a[0] = 1.0
        return x

    def passes_self(self, x):
        return helper(self, x)

    def ping(self, x):
        return self.pong(x)

    def pong(self, x):
        return self.ping(x)

    @property
    def counted(self):
        self.count = 1
        return self.a

    def loss_caches(self, x):
        return np.sum(self.caches(x))

    def loss_writes_into(self, x):
        return np.sum(self.writes_into(x))

    def loss_passes_self(self, x):
        return np.sum(self.passes_self(x))

    def loss_recursive(self, x):
        return np.sum(self.ping(x))

    def loss_super(self, x):
        return super().loss(x)

    def loss_method_value(self, x):
        f = self.caches
        return np.sum(f(x))

    def loss_counted(self, x):
        return np.sum(self.counted * x)

    def loss_instance_attribute(self, x):
        return np.sum(self.act(x))


def helper(obj, x):
    return obj.a * x


@pytest.mark.parametrize("method, match, error", [
    ("loss_caches", r"self.last is written here: a method differentiated \(and the methods "
                    r"it calls\) may only read self", UnsupportedSyntax),
    ("loss_writes_into", r"self.a is written into here", UnsupportedSyntax),
    ("loss_passes_self", r"Refused.passes_self uses self other than by reading its "
                         r"attributes and calling its methods", UnsupportedSyntax),
    ("loss_recursive", r"Refused.ping calls itself \(directly or through other methods\)",
     RecursiveFunction),
    ("loss_super", r"super\(\) cannot be followed", UnsupportedSyntax),
    ("loss_method_value", r"the method self.caches can only be called here",
     UnsupportedSyntax),
    ("loss_counted", r"the property counted writes to the object", UnsupportedSyntax),
    ("loss_instance_attribute", r"self.act is not a method of the object's class Refused",
     UnsupportedSyntax),
])
def test_what_cannot_be_followed_is_refused_at_its_line(method, match, error):
    with pytest.raises(error, match=r"test_methods.py:\d+: " + match):
        srcgrad.grad(getattr(Refused(), method), jit=False)(np.ones(2))


class Leaf:
    def __init__(self):
        self.w = np.array([2.0, 3.0])

    def value(self, x):
        return np.sum(self.w * x)


class Middle:
    def __init__(self):
        self.leaf = Leaf()

    def value(self, x):
        return self.leaf.value(x)


class Top:
    def __init__(self):
        self.middle = Middle()

    def grandchild(self, x):
        return self.middle.leaf.value(x) * 2.0

    def through_the_child(self, x):
        return self.middle.value(x)


@pytest.mark.parametrize("name, where", [("grandchild", "self.middle.leaf.value"),
                                         ("through_the_child", "self.leaf.value")])
def test_a_method_of_an_object_two_attributes_below_is_refused_at_its_line(name, where):
    # only the object's methods and those of the objects its attributes hold are followed
    # (a grandchild's call was a MissingRule naming `.value()`)
    fun = getattr(Top(), name)
    with pytest.raises(UnsupportedSyntax, match=rf"test_methods.py:\d+: {re.escape(where)}"
                                                rf"\(\.\.\.\) in \w+\.\w+ calls a method of "
                                                rf"an object held 2 attributes below"):
        srcgrad.grad(fun, jit=False)(np.ones(2))
    np.testing.assert_allclose(srcgrad.grad(Middle().value, jit=False)(np.ones(2)), [2, 3])


# ---- a method of an object the function differentiated reads (`model.loss(w, x)`) ----
class ScaledLoss:
    def __init__(self, model, scale):
        self.model, self.scale = model, scale

    def total(self, w, x):
        return self.scale * self.model.loss(w, x)


GLOBAL_MODEL = Model(np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]]),
                     np.array([0.1, -0.3, 0.2]))
GLOBAL_HOLDER = ScaledLoss(Shifted(np.array([[1.0, 0.5], [-0.3, 0.2], [0.4, 0.4]]),
                               np.array([0.2, 0.0, -0.1])), 0.5)


def _calls_a_method(w, x):
    return GLOBAL_MODEL.loss(w, x) + GLOBAL_MODEL.shifted(w) + np.sum(w ** 2)


def _calls_a_held_method(w, x):
    return GLOBAL_HOLDER.total(w, x)


@pytest.fixture
def _global_model():
    a, y = GLOBAL_MODEL.A, GLOBAL_MODEL.y.copy()
    yield GLOBAL_MODEL
    GLOBAL_MODEL.A = a
    GLOBAL_MODEL.y[:] = y


def test_a_method_of_a_global_object_called(jit, _global_model):
    # was MissingRule: `GLOBAL_MODEL.loss` has no gradient rule
    m, x = _global_model, 1.5
    g = srcgrad.grad(_calls_a_method, wrt=(0, 1), jit=jit)
    gw, gx = g(W, x)
    # by hand: r = tanh(A w) x - y, loss = sum(r^2); shifted = sum(tanh(A w) * y / 2)
    t = np.tanh(m.A @ W)
    r = t * x - m.y
    np.testing.assert_allclose(gw, m.A.T @ ((2 * r * x + 0.5 * m.y) * (1 - t ** 2)) + 2 * W)
    np.testing.assert_allclose(gx, np.sum(2 * r * t))
    assert_grad(_calls_a_method, [gw, gx], (W, x), [0, 1])
    dvalue = srcgrad.jvp(_calls_a_method, jit=jit)(W, x, np.array([1.0, -1.0]))[1]
    assert dvalue == pytest.approx(slope(_calls_a_method, (W, x), (np.array([1.0, -1.0]),
                                                                   0.0)), rel=1e-6)
    # the object's attributes changed (written into, bound again): the gradient follows
    m.y[0] = 2.0
    assert_grad(_calls_a_method, list(g(W, x)), (W, x), [0, 1])
    m.A = m.A * 2.0
    assert_grad(_calls_a_method, list(g(W, x)), (W, x), [0, 1])


def test_a_method_of_an_object_an_attribute_holds(jit):
    g = srcgrad.grad(_calls_a_held_method, wrt=(0, 1), jit=jit)
    got = g(W, 0.7)
    # by hand: 0.5 * sum((tanh(A w) + x - y)^2), the subclass's predict
    m = GLOBAL_HOLDER.model
    t = np.tanh(m.A @ W)
    r = t + 0.7 - m.y
    np.testing.assert_allclose(got[0], 0.5 * m.A.T @ (2 * r * (1 - t ** 2)))
    np.testing.assert_allclose(got[1], 0.5 * np.sum(2 * r))
    assert_grad(_calls_a_held_method, list(got), (W, 0.7), [0, 1])


class _Counting:
    def __init__(self):
        self.n, self.w = 0, np.ones(3)

    def bump(self, x):
        self.n = self.n + 1
        return np.sum(self.w * x)


COUNTING = _Counting()


def _calls_a_writing_method(x):
    return COUNTING.bump(x)


def test_a_method_of_a_global_object_that_writes_to_it_is_refused():
    with pytest.raises(UnsupportedSyntax, match=r"test_methods.py:\d+: self.n is written"):
        srcgrad.grad(_calls_a_writing_method, jit=False)(np.ones(3))


class _Scaled:
    def __init__(self):
        self.base = np.array([1.0, 2.0, 3.0])

    @property
    def scale(self):
        return self.base * 2.0

    def loss(self, x):
        return np.sum(self.scale * x ** 2)


SCALED = _Scaled()


def _through_a_property(x):
    return SCALED.loss(x)


def test_an_attribute_a_property_reads_changes(jit):
    g = srcgrad.grad(_through_a_property, jit=jit)
    x = np.array([0.3, -0.5, 0.7])
    np.testing.assert_allclose(g(x), 4 * SCALED.base * x)
    SCALED.base = np.array([0.0, 1.0, 0.0])   # read by the property only
    np.testing.assert_allclose(g(x), 4 * SCALED.base * x)
