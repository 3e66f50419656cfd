"""Scalarisation (srcgrad/passes/scalarise.py, runtime/scalarised.py): a run of slice
statements in a loop body becomes one index loop, which must compute what NumPy's slices
compute (NumPy is the reference: the loop function is run against the slice function on
random data, as Python, and gradients compiled against central differences and values
known by hand)."""

import dataclasses
import inspect
import re

import gast
import numpy as np
import pytest
from fd import assert_grad, slope
from numba import njit

import srcgrad
from srcgrad import codegen
from srcgrad.codegen import to_source
from srcgrad.passes import scalarise as scalarise_pass
from srcgrad.runtime.scalarised import _fits_for


def heat(u0, a, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def heat_sum(u0, a):
    u = u0.copy()
    for _ in range(1):
        u[1:-1] = u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u)


def two_back(u0, a):
    """A read two entries behind the write: the loop carries two old values."""
    u = u0.copy()
    for _ in range(3):
        u[2:] = u[2:] + a * u[:-2] * u[1:-1]
    return np.sum(u ** 2)


def ahead(u0, a):
    """A read ahead of the write: the loop has not written it yet, as NumPy."""
    u = u0.copy()
    for _ in range(3):
        u[:-1] = u[:-1] * a + u[1:]
    return np.sum(u ** 2)


def read_after_write(u0, a):
    """v is written, then read one entry ahead: NumPy reads the new v, which the loop
    would not have written yet, so the run is split there."""
    u = u0.copy()
    v = np.zeros_like(u0)
    for _ in range(3):
        v[1:-1] = a * u[1:-1]
        u[1:-1] = u[1:-1] + v[2:] * v[:-2]
    return np.sum(u ** 2)


def short_slices(u0, a):
    u = u0.copy()
    for _ in range(2):
        u[1:4] = u[2:5] * a - u[0:3]
    return np.sum(u ** 2)


def wide(u0, a):
    """A stencil two entries wide: its adjoint adds into du two entries ahead of the
    write `du[2:-2] = 0.0`, which the loop holds back two steps."""
    u = u0.copy()
    for _ in range(3):
        u[2:-2] = u[2:-2] + a * (u[4:] - u[:-4]) * u[3:-1]
    return np.sum(u ** 2)


def held_back(u0, a):
    """Writes into v at two offsets, each read after (its adjoint: two zeroings and the
    additions between them)."""
    u = u0.copy()
    v = np.zeros_like(u0)
    for _ in range(3):
        v[1:-2] = a * u[1:-2]
        v[3:] += u[:-3] * u[2:-1]
        v[:-3] -= u[3:]
        u = u + 0.1 * v
    return np.sum(v ** 2) + np.sum(u ** 2)


CORPUS = [heat, wide, two_back, ahead, read_after_write, short_slices, held_back]


def _lowered(fun, wrt=(0, 1), carry=None):
    """The gradient of `fun` as Python, this pass applied to its IR (whatever the disk
    cache of generated code holds), and its (loop, slices) pairs."""
    gen = srcgrad.grad(fun, wrt=wrt, jit=False).generated
    functions = scalarise_pass.scalarise(list(gen.ir.values()), gen.namespace)
    source = to_source(gast.Module(body=functions, type_ignores=[]))
    module = codegen.load(source, gen.namespace.globals(), f"scalarise_{fun.__name__}", "py")
    pairs = [(getattr(module, f.srcgrad_jit.args[0]), f) for f in vars(module).values()
             if callable(f) and hasattr(f, "srcgrad_jit")]
    return source, pairs


def _arguments(slices, rng, n):
    """Random arguments for a pair: arrays of n entries, vectors and likes of the slices'
    length, numbers."""
    _, _, least, (k, c), groups = slices.srcgrad_jit.args
    size = k * n + c
    arrays, vectors, numbers, likes = groups
    return ([rng.standard_normal(n) for _ in range(arrays)]
            + [rng.standard_normal(size) for _ in range(vectors)]
            + [float(rng.standard_normal()) for _ in range(numbers)]
            + [np.empty(size) for _ in range(likes)])


def _agree(loop, slices, rng, n=9):
    args = _arguments(slices, rng, n)
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = slices(*args)
    got = loop(*mine)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(args + list(want), mine + list(got), strict=True):
        if w is None:
            assert g is None
            continue
        if isinstance(g, np.ndarray) and not g.flags.owndata:
            # a value read after the run for its shape only: the loop gives a slice
            assert np.shape(w) == np.shape(g)
            continue
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("fun", CORPUS, ids=lambda f: f.__name__)
def test_loops_compute_what_the_slices_do(fun, rng):
    source, pairs = _lowered(fun)
    assert pairs, source
    for loop, slices in pairs:
        for n in (9, 16):
            _agree(loop, slices, rng, n)


def test_carried_values_are_what_makes_the_loop_right(rng, monkeypatch):
    """Without the scalars it carries, heat's loop reads the entries it has just written
    (NumPy reads the old ones): the comparison above must see it."""
    monkeypatch.setattr(scalarise_pass, "_carry", lambda accesses: None)
    _, pairs = _lowered(heat)
    with pytest.raises(AssertionError):
        for loop, slices in pairs:
            _agree(loop, slices, rng)


@pytest.mark.parametrize("fun", [heat, wide], ids=lambda f: f.__name__)
def test_held_additions_are_what_makes_the_loop_right(fun, rng, monkeypatch):
    """Without holding back the additions ahead of a write (heat's adjoint: `du[1:-1] =
    0.0` then `du[2:] += ...`), the write wipes out additions the loop made first."""
    real = scalarise_pass._carry

    def eager(accesses):
        carry = real(accesses)
        return dataclasses.replace(carry, delays={}) if carry else carry
    monkeypatch.setattr(scalarise_pass, "_carry", eager)
    _, pairs = _lowered(fun)
    with pytest.raises(AssertionError):
        for loop, slices in pairs:
            _agree(loop, slices, rng)


def test_heat_adjoint_is_one_loop():
    source, pairs = _lowered(heat)
    adjoint = source[source.index("# adjoint"):source.index("return du0")]
    assert len(re.findall(r"_slices(_\d+)?\(", adjoint)) == 1, adjoint
    loop = inspect.getsource(pairs[1][0])
    assert "du[i] += du_late" in loop and "du_late = d_t2" in loop, loop
    assert "du[n - 1] += du_late" in loop, loop


def test_heat_forward_is_one_loop_with_a_carried_scalar():
    source, pairs = _lowered(heat)
    loop = inspect.getsource(pairs[0][0])
    assert "u_im1 = u[0]" in loop and "u_im1 = u_i" in loop, loop
    assert "u[i] = u_i + a * (u[i + 1] - 2.0 * u_i + u_im1)" in loop, loop
    assert f"@scalarised({pairs[0][0].__name__}, 3, (1, -2), (1, 0, 1, 0))" in source


def test_read_after_write_is_split(rng):
    source, pairs = _lowered(read_after_write)
    forward = source[:source.index("# adjoint")]
    # v's write and its reads one entry either side are in two loops, v kept between
    assert len(re.findall(r"_slices(_\d+)?\(", forward)) == 2, forward


def _variable_bound(u0, k):
    u = u0.copy()
    for _ in range(3):
        u[k:] = u[k:] * 2.0 + u[k:] * u[k:]
    return np.sum(u)


def _unequal(u0, a):
    u = u0.copy()
    for _ in range(3):
        u[1:-1] = u[1:-1] * a + u[2:] * u[2:]
        u[1:] = u[1:] * a
    return np.sum(u)


def _outside_loop(u0, a):
    u = u0.copy()
    u[1:-1] = u[1:-1] + a * (u[2:] - u[:-2])
    return np.sum(u ** 2)


@pytest.mark.parametrize("fun", [_variable_bound, _outside_loop],
                         ids=["variable bound", "outside a loop"])
def test_left_as_it_is(fun):
    """Bounds that are not constants, code outside loops."""
    source = srcgrad.grad(fun, wrt=0, jit=False).source
    assert "scalarised" not in source, source


def _swapped_buffers(x, y, n):
    u, v = x * 1.0, np.zeros(3)
    for _ in range(n):
        v[:] = u * y
        u, v = v, u
    return np.sum(u * x) + np.sum(v)


def test_a_run_it_does_not_lower_keeps_each_line_over_its_code():
    """`v[:] = u * y` and the swap after it are a run scalarise takes and leaves as it
    was: each statement stays under the comment of its line, forward and adjoint (they
    were all put under the first line's comment, and the adjoint's under the last's)."""
    source = srcgrad.grad(_swapped_buffers, jit=False).source
    assert "scalarised" not in source, source
    start = inspect.getsourcelines(_swapped_buffers)[1]
    write, swap = f"line {start + 3}: v[:] = u * y", f"line {start + 4}: u, v = v, u"
    at = source.index(write)
    for text in ("v[:] =", swap, "u = _t", "# adjoint", swap, "du = d_t", write,
                 "dv[:] = 0.0"):   # each after the one before
        at = source.index(text, at)


def test_unequal_lengths_are_two_loops(rng):
    """`u[1:-1]` and `u[1:]` have lengths that differ: each statement is a loop of its own
    (and its adjoint too), never one loop over both."""
    source, pairs = _lowered(_unequal, wrt=(0, 1))
    forward = source[:source.index("# adjoint")]
    assert len(re.findall(r"_slices(_\d+)?\(", forward)) == 2, forward
    for loop, slices in pairs:
        _agree(loop, slices, rng)


def test_heat_gradient(jit, rng):
    u0, a = rng.standard_normal(12), 0.2
    g = srcgrad.grad(heat, wrt=(0, 1), jit=jit)
    assert "scalarised" in g.source
    for n in (12, 3, 2):   # 3: the fewest the loop serves; 2: slices of nothing
        args = (u0[:n].copy(), a, 5)
        du0, da = g(*args)
        assert_grad(heat, (du0, da), args, (0, 1))
    du0, da = srcgrad.grad(heat_sum, wrt=(0, 1), jit=jit)(u0, a)
    # sum(u1) = sum(u0) + a * (u0[-1] - u0[-2] - u0[1] + u0[0]) (the stencil telescopes)
    want = np.ones(12)
    want[[0, 1, -2, -1]] += a * np.array([1.0, -1.0, -1.0, 1.0])
    np.testing.assert_allclose(du0, want, rtol=1e-12)
    np.testing.assert_allclose(da, u0[-1] - u0[-2] - u0[1] + u0[0], rtol=1e-12)


@pytest.mark.compiled
def test_compiled_falls_back_to_the_slices(rng):
    """Compiled, a 2-D array (the slices are rows) and a vector alpha (broadcast) run the
    slices, which numba types: the gradient is still right."""
    g = srcgrad.grad(heat, wrt=(0, 1), jit=True)
    rows = (rng.standard_normal((8, 3)), 0.2, 3)
    assert_grad(heat, g(*rows), rows, (0, 1))


@pytest.mark.compiled
def test_the_guard(rng):
    fits = njit(_fits_for(2, 1, 1))
    u, v = rng.standard_normal(10), rng.standard_normal(10)
    d, like = rng.standard_normal(8), np.empty(8)
    assert fits(3, (1, -2), (u, v), (d,), (like,))
    assert not fits(11, (1, -2), (u, v), (d,), (like,))            # too short
    assert not fits(3, (1, -2), (u, v[:9]), (d,), (like,))         # lengths differ
    assert not fits(3, (1, -2), (u, v), (d[:7],), (like,))         # a vector's length
    assert not fits(3, (1, -2), (u, v), (d,), (like[:7],))         # a like's length
    w = np.zeros(20)
    assert not fits(3, (1, -2), (w[:10], w[5:15]), (d,), (like,))  # sharing memory
    assert not fits(3, (1, -2), (u, v), (u[1:-1],), (like,))
    assert fits(3, (1, -2), (w[:10], w[10:]), (d,), (like,))       # next to each other
    assert fits(3, (1, -2), (w[::2], w[1::2]), (d,), (like,)) is False  # interleaved


def _views_only(x0, w):
    x = x0.copy()
    for _ in range(2):
        x = np.tanh(x[1:] * w + x[:-1])
    return np.sum(x)


def test_views_only_stay_as_they_are(rng):
    """A run of slices read whole later (views) computes nothing: it is left alone (the
    fuzzer found a loop with an empty body)."""
    args = (rng.standard_normal(7), 0.3)
    g = srcgrad.grad(_views_only, wrt=(0, 1), jit=False)
    assert_grad(_views_only, g(*args), args, (0, 1))


def _slice_of_a_new_value(x, n):
    s = 0.0
    for _ in range(n):
        t = np.arctan2(x, x ** 2 + 1.0)[:1]
        s = s + np.sum(t * x[1])
    return s


def test_a_slice_of_a_value_the_run_computes_is_not_a_parameter(jit, rng):
    """Fuzzer seeds 9900093 and 9900124: the tangent of arctan2 (`t_t3 = ...`), then its
    slice `t_t3[:1]`, were one run, whose loop read t_t3 as a parameter before the run
    bound it (NameError, and an empty loop body). A value a run computes is not sliced by
    the same run's loop."""
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    value, tangent = srcgrad.jvp(_slice_of_a_new_value, jit=jit)(x, 2, v)
    assert value == pytest.approx(_slice_of_a_new_value(x, 2), rel=1e-12)
    along = slope(lambda x: _slice_of_a_new_value(x, 2), (x,), (v,))
    assert tangent == pytest.approx(along, rel=1e-6)
    assert_grad(_slice_of_a_new_value, (srcgrad.grad(_slice_of_a_new_value, jit=jit)(x, 2),),
                (x, 2), (0,))
    # by hand at x = (0, 1, 0): t = atan2(0, 1) = 0, so only d/dx0 of 2 * atan(x0) * x1
    # survives: 2 * x1 = 2
    np.testing.assert_allclose(srcgrad.grad(_slice_of_a_new_value, jit=jit)(
        np.array([0.0, 1.0, 0.0]), 2), [2.0, 0.0, 0.0], atol=1e-12)
