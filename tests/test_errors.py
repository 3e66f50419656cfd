"""Bad input gets a clear SrcgradError naming file:line, the construct and the line."""

import os
import warnings

import gradbench
import numpy as np
import pytest
from marks import compiles

import srcgrad
from srcgrad import (
    MissingRule,
    NonScalarOutput,
    NoSourceError,
    RecursiveFunction,
    SrcgradError,
    UnsupportedSyntax,
    WrtError,
)

HERE = os.path.basename(__file__)


def with_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def with_class(x):
    class A:
        pass
    return x


def with_global(x):
    global G
    G = x
    return x


def with_set_comprehension(x):
    return sum({v for v in (x, x)})


def with_comprehension(x):
    return np.sum(np.array(tuple(x * i for i in range(3))))


def with_star(x):
    args = (x,)
    return np.sum(*args)


def with_double_star(x):
    kw = dict(axis=0)
    return np.sum(x, **kw)


def with_bare_raise(x):
    if x > 1.0:
        raise
    return x


def with_raise_from(x):
    if x > 1.0:
        raise ValueError("x") from None
    return x


def with_fstring_value(x):
    label = f"x={x}"
    return x * len(label)


def test_an_f_string_runs_as_python():
    # Python formats it (print(f"loss {y:.3f}") in a loss function): the Python form runs
    # it (numba formats no values into strings: test_guards)
    assert srcgrad.grad(with_fstring_value, jit=False)(2.0) == len("x=2.0")


@compiles
def test_numba_refuses_an_f_string_at_its_line():
    with pytest.raises(srcgrad.SrcgradError, match=rf"{HERE}:\d+: numba cannot compile"):
        srcgrad.grad(with_fstring_value, jit=True)(2.0)


@pytest.mark.parametrize("fun,construct,line", [
    (with_try, "'try' statements", "try:"),
    (with_class, "class definitions", "class A:"),
    (with_global, "'global' statements", "global G"),
    (with_set_comprehension, "set comprehensions", "return sum({v for v in (x, x)})"),
    (with_comprehension, "a generator expression can be differentiated where sum, max, min",
     "return np.sum(np.array(tuple(x * i for i"),
    (with_star, "starred arguments", "return np.sum(*args)"),
    (with_double_star, "'**' arguments in calls", "return np.sum(x, **kw)"),
    (with_bare_raise, "only 'raise E(...)'", "raise"),
    (with_raise_from, "no 'from'", 'raise ValueError("x") from None'),
])
def test_unsupported_syntax(fun, construct, line):
    with pytest.raises(UnsupportedSyntax) as info:
        srcgrad.grad(fun, jit=False)(1.0)
    message = str(info.value)
    assert f"{HERE}:" in message and construct in message and line in message
    assert info.value.lineno and info.value.lineno > fun.__code__.co_firstlineno


def test_no_source_for_builtins_and_repl_lambdas():
    with pytest.raises(NoSourceError, match="not a Python function"):
        srcgrad.grad(np.sin)(1.0)
    repl = eval("lambda x: x * 2.0")  # like a lambda typed at the REPL: no file
    with pytest.raises(NoSourceError, match="cannot read the source"):
        srcgrad.grad(repl)(1.0)


class _Model:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0])

    def loss(self, x):
        return np.sum(self.w * x ** 2)


def test_the_function_of_a_method_takes_the_object_first(jit):
    model, x = _Model(), np.ones(3)
    with warnings.catch_warnings():   # (numba cannot take the object: the Python form)
        warnings.simplefilter("ignore", srcgrad.JitFallbackWarning)
        got = srcgrad.grad(_Model.loss, wrt=1, jit="auto" if jit else False)(model, x)
    np.testing.assert_allclose(got, 2 * model.w * x)


def test_lambda_in_a_file_is_differentiated():
    square = lambda x: x * x  # noqa: E731
    assert srcgrad.grad(square, jit=False)(3.0) == 6.0


def unknown_call(x):
    return np.sum(np.nextafter(x, x[0]))


def local_callable(x, f):
    return f(x)


def test_call_without_rule_or_source():
    with pytest.raises(MissingRule) as info:
        srcgrad.grad(unknown_call, jit=False)(np.ones(3))
    assert "np.nextafter" in str(info.value) and "no gradient rule" in str(info.value)
    assert f"{HERE}:" in str(info.value) and \
        "return np.sum(np.nextafter(x, x[0]))" in str(info.value)
    with pytest.raises(MissingRule, match="a call to the local value"):
        srcgrad.grad(local_callable, jit=False)(1.0, np.sin)


def options_by_position(x):
    return np.sum(np.max(x, 0, None, True) * np.arange(3.0))


def dtype_by_position(x):
    return np.sum(np.sum(x, 0, np.int64) * x)


def method_options_by_position(x):
    return np.sum(x.max(0, None, True) * np.arange(3.0)) + np.sum(x.var(0, None, None, 1))


def method_dtype_by_position(x):
    return np.sum(x.prod(1, np.int64) * x[:, 0])


def test_options_given_by_position_are_named_as_numpy_names_them():
    """Regression: a built-in rule's options were placed by the rule's own parameter
    order, so np.max(x, 0, None, True) gave None for keepdims (a RuleError) and
    np.sum(x, 0, np.int64) passed the dtype as keepdims (and its gradient skipped the
    cast). Now they are named by NumPy's signature: keepdims=True, and a dtype= the rule
    does not take is a clear error."""
    x = np.array([[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]])
    # by hand: column maxima at (1, 0), (0, 1), (1, 2), weighted 0, 1, 2
    np.testing.assert_allclose(srcgrad.grad(options_by_position, jit=False)(x),
                               [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    with pytest.raises(srcgrad.SrcgradError, match="has no parameter 'dtype'") as info:
        srcgrad.grad(dtype_by_position, jit=False)(x)
    assert f"{HERE}:" in str(info.value)
    # array methods too: x.var(0, None, None, 1) is ddof=1, whose gradient in column j
    # is 2 (x - mean_j) / (n - 1), n = 2 (x.prod(1, np.int64): a wrong
    # gradient before, through the integer cast)
    by_hand = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]) + 2 * (x - np.mean(x, axis=0))
    np.testing.assert_allclose(srcgrad.grad(method_options_by_position, jit=False)(x),
                               by_hand)
    with pytest.raises(srcgrad.SrcgradError, match="has no parameter 'dtype'"):
        srcgrad.grad(method_dtype_by_position, jit=False)(x)


def test_an_option_numpy_renamed_keeps_the_rules_name():
    """Regression (the `oldest` env, NumPy 1.24): np.reshape's second parameter was
    `newshape` before NumPy 2.1, so naming positional options by NumPy's signature gave
    the reshape rule (whose parameter is `shape`) a keyword it has no parameter for."""
    import gast

    from srcgrad.passes.base import by_name

    def reshape_of_numpy_1(a, newshape, order="C"):
        return np.reshape(a, newshape, order)

    args = [gast.Name("x", gast.Load(), None, None), gast.Constant((3, 2), None),
            gast.Constant("F", None)]
    _, kwargs = by_name(reshape_of_numpy_1, args, {}, 1, ["x", "shape", "order"])
    assert sorted(kwargs) == ["order", "shape"]
    _, kwargs = by_name(np.sum, args[:1] + [gast.Constant(0, None), gast.Constant(1, None)],
                        {}, 1, ["x", "axis", "keepdims"])
    assert sorted(kwargs) == ["axis", "dtype"]   # NumPy's dtype, never the rule's keepdims


def four_grids(a, b, c, d):
    A, B, C, D = np.meshgrid(a, b, c, d)
    return np.sum(A * B * C * D)


def atleast_of_two(a, b):
    u, v = np.atleast_1d(a, b)
    return np.sum(u * v)


@pytest.mark.parametrize("jit", [False, True])
def test_more_arguments_than_a_rule_of_star_args_names(jit):
    """Regression: np.meshgrid(*xi) has a rule for up to three vectors; a fourth was
    passed to the rule as its copy= option and failed with NumPy's "truth value of an
    array is ambiguous" (and np.atleast_1d(a, b) said b had no gradient). A call of a
    function of *args given more than its rule names is a clear MissingRule."""
    x = np.arange(1.0, 3.0)
    with pytest.raises(MissingRule, match="meshgrid takes 3 positional arguments, the call "
                                          "gives 4") as info:
        srcgrad.grad(four_grids, wrt=(0, 1, 2, 3), jit=jit)(x, x, x, x)
    assert f"{HERE}:" in str(info.value) and "np.meshgrid(a, b, c, d)" in str(info.value)
    with pytest.raises(MissingRule, match="atleast takes 1 positional argument, the call "
                                          "gives 2"):
        srcgrad.grad(atleast_of_two, wrt=(0, 1), jit=jit)(x, x)


def constructor_of_active(x):
    v = np.full(2, x)
    return np.sum(v)


def test_constructor_of_a_differentiated_value():
    with pytest.raises(MissingRule, match="no gradient flows through it"):
        srcgrad.grad(constructor_of_active, jit=False)(1.0)


def f2(x, y):
    return x * y


def test_wrt_errors():
    with pytest.raises(WrtError, match="names no parameter"):
        srcgrad.grad(f2, wrt="z")
    with pytest.raises(WrtError, match="has 2 parameter"):
        srcgrad.grad(f2, wrt=2)
    with pytest.raises(WrtError, match="an integer"):
        srcgrad.grad(f2, jit=False)(5, 3.0)
    with pytest.raises(WrtError, match="a boolean"):
        srcgrad.grad(f2, jit=False)(np.array([True]), 3.0)


def vector_result(x):
    return x * 2.0


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_non_scalar_result(jit):
    with pytest.raises(NonScalarOutput) as info:
        srcgrad.grad(vector_result, jit=jit)(np.ones(3))
    assert "use vjp" in str(info.value) and "return x * 2.0" in str(info.value)


def constant_array_result(x):
    return np.ones(3)


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_non_scalar_constant_result(jit):
    # no gradient flows (the gradient is zero), but grad still needs a scalar result
    with pytest.raises(NonScalarOutput, match="use vjp"):
        srcgrad.grad(constant_array_result, jit=jit)(2.0)


def constant_sum(x):
    return np.sum(np.ones(3))


def test_constant_scalar_result_has_a_zero_gradient(jit):
    assert srcgrad.grad(constant_sum, jit=jit)(2.0) == 0.0
    lines = [line.strip() for line in srcgrad.grad(constant_sum).source.splitlines()]
    # the dead value's line comment went with it; the zero gradient says why it is zero
    assert not any(line.startswith("# line") for line in lines), lines
    assert lines[lines.index("dx = zeros_like(x)") - 1] == "# no gradient flows back to x"


def recursive(x, n):
    return recursive(x, n) * x


def test_recursion():
    with pytest.raises(RecursiveFunction, match="calls itself"):
        srcgrad.grad(recursive, jit=False)(1.0, 3)


def halving(x, n):
    if x > 1.0:
        return halving(0.5 * x, n) * x
    return x


def deeper(x, n):
    if n == 0:
        return x
    return deeper(x, n + 1) * x


def test_recursion_on_data_or_without_end():
    # the depth of recursion on a value is not known when the code is generated; nor is
    # that of one whose int argument never reaches its base case (issue 26 #12)
    with pytest.raises(RecursiveFunction, match=r"test_errors.py:\d+: halving calls itself"):
        srcgrad.grad(halving, jit=False)(3.0, 2)
    with pytest.raises(RecursiveFunction, match="more than 64 levels deep"):
        srcgrad.grad(deeper, jit=False)(1.0, 1)


by_minors = srcgrad.grad(gradbench.det_by_minors)


def sum_of_det_gradient(A):
    return np.sum(by_minors(A, 2))


def test_gradient_of_a_recursive_function_called_inside():
    with pytest.raises(MissingRule, match="of a function that does not call itself"):
        srcgrad.grad(sum_of_det_gradient, jit=False)(np.eye(2))


def test_every_error_is_a_srcgrad_error():
    for cls in (UnsupportedSyntax, NoSourceError, MissingRule, WrtError, NonScalarOutput,
                RecursiveFunction):
        assert issubclass(cls, SrcgradError)


def undefined_name(x):
    return x * not_defined_anywhere  # noqa: F821


def test_undefined_global():
    with pytest.raises(SrcgradError, match="'not_defined_anywhere' is not defined"):
        srcgrad.grad(undefined_name, jit=False)(1.0)


def write_through_view(x):
    y = x.copy()
    row = y[1:]
    row[0] = x[0]
    return np.sum(y)


def write_after_a_swap_of_shared_names(x):
    a = x * 2.0
    b = a
    a, b = b, a
    a[0] = a[1] * 3.0
    return np.sum(b ** 2)


@pytest.mark.parametrize("fun, message, line", [
    (write_through_view, r"'row' is a view of 'y'", 3),
    # (never the names normalize gives: `a_1`, `_t3`; fuzz seed 10300090)
    (write_after_a_swap_of_shared_names, r"'a' is bound from another name \(`a = other`, "
     r"a tuple assignment or a swap\).*copy it first \(a = a\.copy\(\)\)", 4),
])
def test_control_flow_errors(fun, message, line):
    """Each names the file and the user's line (`line` lines below the `def`)."""
    x = np.arange(3.0)
    before = x.copy()
    with pytest.raises(UnsupportedSyntax, match=message) as info:
        srcgrad.grad(fun, jit=False)(x)
    np.testing.assert_array_equal(x, before)  # the caller's array is untouched
    assert f"test_errors.py:{fun.__code__.co_firstlineno + line}:" in str(info.value)


def index_out_of_bounds(x, k):
    y = x * 2.0
    return np.sum(y[k])


def test_an_error_of_the_users_code_names_its_line():
    # an error the user's own code raises as the generated code runs (an index out of
    # bounds) keeps its type, and a note names the user's line it comes from (before
    # Python 3.11, which has no notes, a line of its message)
    with pytest.raises(IndexError) as info:
        srcgrad.grad(index_out_of_bounds, jit=False)(np.ones(2), 5)
    note = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    line = index_out_of_bounds.__code__.co_firstlineno + 2
    assert f"of {HERE}:{line}: return np.sum(y[k])" in note, note


def every_other_pair_set(a):
    z = a * 1.0
    v = z[::2].reshape(2, 2)    # a view of a strided slice: numba reshapes contiguous
    v[0, 0] = 5.0               # arrays only, and this user code is numba's to compile
    return z


def scaled_by_every_other_pair(x):
    return np.sum(x * np.sum(every_other_pair_set(np.arange(8.0))))


@pytest.mark.skipif(os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() not in ("", "0"),
                    reason="SRCGRAD_DISABLE_JIT is set")
def test_numba_refusal_names_what_failed_not_its_headings():
    # numba's message opens with its pipeline and "- Resolution failure for literal
    # arguments:", which the refusal's first line said and nothing after it
    with pytest.raises(SrcgradError, match="numba cannot compile") as info:
        srcgrad.grad(scaled_by_every_other_pair, jit=True)(np.ones(3))
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"{HERE}:")
    assert "reshape() supports contiguous array only (array.reshape of array(float64, 1d, A)" \
           ", in every_other_pair_set)" in first
    assert "Resolution failure" not in first and "Failed in nopython" not in first
    g = srcgrad.grad(scaled_by_every_other_pair, jit=False)(np.ones(3))
    np.testing.assert_allclose(g, np.full(3, 33.0))     # z = (5, 1, 2, ..., 7): the view
