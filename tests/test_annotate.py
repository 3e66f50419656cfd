"""The annotate pass as before/after pairs: override blocks dissolve into calls that carry
their rule, hooks stay as they are, and the normalized hook keeps its block."""

import textwrap

import astor
import gast
import numpy as np
import pytest

import srcgrad
from srcgrad.frontend.parse import parse
from srcgrad.naming import Namer, names_in
from srcgrad.passes.annotate import annotate, hook, hook_names
from srcgrad.passes.normalize import normalize
from srcgrad.rules import NAMED, Overridden


@srcgrad.register_gradient("TA_Half", replace=True)
def half(dy, y, x):
    return 0.5 * dy


@srcgrad.register_gradient("TA_Twice", replace=True)
def twice(dy, y, x):
    return 2.0 * dy


def mine(x):
    return x * x


def by_object(x):
    with srcgrad.gradient_override({np.sin: "TA_Half"}):
        y = np.sin(x) + np.cos(x)
    return np.sin(y)


def by_names(x, n):
    with srcgrad.gradient_override({"sin": "TA_Half", "np.cos": "TA_Twice", mine: half}):
        for _ in range(n):
            if x > 0.0:
                x = np.sin(x) * mine(np.cos(x))
    return x


def nested(x):
    with srcgrad.gradient_override({np.sin: "TA_Half"}):
        a = np.sin(x)
        with srcgrad.gradient_override({"sin": "TA_Twice"}):
            b = np.sin(a)
    return b


def with_hook(x):
    h = np.tanh(x)
    with srcgrad.grad_of(h) as dh:
        dh = np.clip(dh, -1.0, 1.0) * 0.5
    return h * x


def _render(fn) -> str:
    return astor.to_source(gast.gast_to_ast(fn)).strip()


def _body_of(fn) -> list[str]:
    return textwrap.dedent("\n".join(_render(fn).splitlines()[1:])).splitlines()


def _body(source: str) -> str:
    return textwrap.dedent(source).strip()


def test_override_block_dissolves_and_calls_carry_the_rule():
    out = annotate(parse(by_object))
    assert _body_of(out.tree) == _body("""
        y = _override_1(x) + np.cos(x)
        return np.sin(y)
        """).splitlines()
    bound = out.env.lookup("_override_1")
    assert isinstance(bound, Overridden)
    assert bound.primal is np.sin and bound.rule is NAMED["TA_Half"] and bound.what == "np.sin"


def test_keys_by_name_and_user_functions_reach_into_loops_and_branches():
    out = annotate(parse(by_names))
    text = _render(out.tree)
    assert "x = _override_1(x) * _override_2(_override_3(x))" in text, text
    rules = {name: out.env.lookup(name) for name in ("_override_1", "_override_2",
                                                      "_override_3")}
    assert rules["_override_1"].primal is np.sin
    assert rules["_override_1"].rule is NAMED["TA_Half"]
    assert rules["_override_3"].primal is np.cos
    assert rules["_override_3"].rule is NAMED["TA_Twice"]
    assert rules["_override_2"].primal is mine and rules["_override_2"].rule.fn is half


def test_nested_blocks_innermost_wins():
    out = annotate(parse(nested))
    assert out.env.lookup("_override_1").rule is NAMED["TA_Half"]    # a = np.sin(x)
    assert out.env.lookup("_override_2").rule is NAMED["TA_Twice"]   # b = np.sin(a)


def test_the_original_env_is_not_changed():
    parsed = parse(by_object)
    annotate(parsed)
    assert "_override_1" not in parsed.env.closure
    assert "with" in astor.to_source(gast.gast_to_ast(parsed.tree))


def test_hook_stays_and_normalizes_its_block():
    parsed = annotate(parse(with_hook))
    assert hook_names(parsed.tree) == {"dh"}
    namer = Namer(names_in(parsed.tree) - hook_names(parsed.tree))
    fn = normalize(parsed.tree, parsed.env, namer, parsed.filename)
    assert _body_of(fn) == _body("""
        h = np.tanh(x)
        with srcgrad.grad_of(h) as dh:
            _t1 = np.clip(dh, -1.0, 1.0)
            dh = _t1 * 0.5
        _t2 = h * x
        return _t2
        """).splitlines()
    assert hook(fn.body[1]) == ("h", "dh")


def _by_names_by_hand(x, n):
    for _ in range(n):
        if x > 0.0:
            x = np.sin(x) * np.cos(x) ** 2
    return x


@pytest.mark.parametrize("fun,args,want", [
    (by_object, (0.4,), np.sin(np.sin(0.4) + np.cos(0.4))),
    (by_names, (0.4, 2), _by_names_by_hand(0.4, 2)),
    (nested, (0.4,), np.sin(np.sin(0.4))),
    (with_hook, (0.4,), np.tanh(0.4) * 0.4),
])
def test_annotated_functions_run_as_plain_python(fun, args, want):
    assert fun(*args) == pytest.approx(want, rel=1e-15)  # annotations leave the value
