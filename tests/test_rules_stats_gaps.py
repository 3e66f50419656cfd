"""scipy.stats, the gaps to JAX and autograd (srcgrad/rules/stats_gaps.py, their compiled
forms in srcgrad/runtime/stats_gaps.py): the tails and quantiles of expon, cauchy,
logistic and uniform, gumbel_r, gumbel_l and pareto, the tails of chi2, gamma, beta and t,
vonmises, geom, nbinom, poisson.cdf and truncnorm: in the rule sweep against central differences,
forward mode, by hand, refusals, and the compiled forms against SciPy's values.
"""

import numba
import numpy as np
import pytest
from marks import compiles
from scipy import special, stats
from scipy.stats import (
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    geom,
    gumbel_l,
    gumbel_r,
    logistic,
    nbinom,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
)
from sweep import check, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules import OPS
from srcgrad.runtime import stats_gaps as forms

any_, pos, unit, distinct = domains(72)


def records(*pairs):
    """Each distribution's method as the record's own key, and the form generated code
    calls in its place (tests/test_rules_stats.py)."""
    return tuple(p for method, form in pairs for p in (next(o for o in OPS if o == method),
                                                         form))


def methods(dist, names):
    return records(*[(getattr(dist, n), getattr(forms, f"{dist.name}_{n}")) for n in names])


TAILS = (*methods(expon, ["sf", "logsf", "logcdf", "ppf", "isf"]),
         *methods(cauchy, ["sf", "logsf", "logcdf", "ppf", "isf"]),
         *methods(logistic, ["sf", "logsf", "logcdf", "ppf", "isf"]),
         *methods(uniform, ["cdf", "ppf"]))
GUMBEL = (*methods(gumbel_r, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]),
          *methods(gumbel_l, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]))
PARETO = methods(pareto, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"])
SHAPED = (*methods(chi2, ["sf", "logsf", "logcdf"]), *methods(gamma, ["sf", "logsf", "logcdf"]),
          *methods(beta, ["sf", "logsf", "logcdf"]), *methods(t, ["logcdf"]))
VONMISES = methods(vonmises, ["logpdf", "pdf"])
TRUNCNORM = methods(truncnorm, ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"])
COUNTS = (*methods(geom, ["logpmf", "pmf"]), *methods(nbinom, ["logpmf", "pmf"]),
          *methods(poisson, ["cdf"]))


def tails(x, q, mu, s):
    # x > mu (expon's support); q in (0, 1); keywords and defaults too
    return np.sum(expon.sf(x, mu, s) + expon.logsf(x, mu, s) * 0.7 +
                  expon.logcdf(x, loc=mu, scale=s) + expon.ppf(q, mu, s) * 0.3 +
                  expon.isf(q, scale=s) * 0.4 + cauchy.sf(x, mu, s) * 1.1 +
                  cauchy.logsf(x, mu, s) + cauchy.logcdf(x, mu) * 0.6 +
                  cauchy.ppf(q, mu, s) * 0.2 + stats.cauchy.isf(q, mu, s) * 0.1 +
                  logistic.sf(x, mu, s) * 0.8 + logistic.logsf(x, mu, s) +
                  logistic.logcdf(x, scale=s) * 0.5 + logistic.ppf(q, mu, s) * 0.9 +
                  logistic.isf(q, mu, s) * 0.2 + uniform.cdf(0.1 * x, mu - 2.0, s + 4.0) +
                  uniform.ppf(q, mu, s) * 1.3)


def gumbels(x, q, mu, s):
    return np.sum(gumbel_r.logpdf(x, mu, s) + gumbel_r.pdf(x, mu, s) * 2.0 +
                  gumbel_r.cdf(x, mu, s) + gumbel_r.logcdf(x, mu, s) * 0.3 +
                  gumbel_r.sf(x, loc=mu, scale=s) * 0.7 + gumbel_r.logsf(x, mu, s) +
                  gumbel_r.ppf(q, mu, s) * 0.4 + gumbel_l.logpdf(x, mu, s) * 0.6 +
                  gumbel_l.pdf(x, mu, s) + gumbel_l.cdf(x, mu, s) * 0.9 +
                  gumbel_l.logcdf(x, mu, s) + gumbel_l.sf(x, mu, s) * 1.2 +
                  gumbel_l.logsf(x, mu, s) * 0.2 + gumbel_l.ppf(q, scale=s) * 0.5)


def paretos(x, b, q, mu, s):
    # z = (x - mu) / s > 1: inside the support
    return np.sum(pareto.logpdf(x, b, mu, s) + pareto.pdf(x, b, mu, s) * 3.0 +
                  pareto.cdf(x, b, mu, s) + pareto.logcdf(x, b, mu, s) * 0.4 +
                  pareto.sf(x, b, loc=mu, scale=s) * 2.0 + pareto.logsf(x, b, mu, s) +
                  pareto.ppf(q, b, mu, s) * 0.3)


def shaped(x, a, u, mu, s):
    # x > mu (gamma's and chi2's support); u in (0.2, 0.8) (beta's, of loc mu / 10); the
    # shapes (of a) are data
    return np.sum(chi2.sf(x, 3.0 * a, mu, s) + chi2.logsf(x, 2.5, mu, s) +
                  chi2.logcdf(x, 3.0 * a, mu, s) * 0.5 + gamma.sf(x, a, mu, s) * 0.8 +
                  gamma.logsf(x, a, scale=s) + gamma.logcdf(x, a, mu, s) +
                  beta.sf(u, 2.0, a + 1.0, 0.1 * mu, s) + beta.logsf(u, a, 1.5, 0.1 * mu, s) +
                  beta.logcdf(u, 2.0 * a, a, loc=0.1 * mu, scale=s) +
                  t.logcdf(x, 2.0 * a, mu, s) * 0.7 + t.logcdf(-x, 4.0) * 0.2)


def vonmis(x, kappa, mu, s):
    return np.sum(vonmises.logpdf(x, kappa, mu, s) + vonmises.pdf(x, kappa, mu, s) * 2.0 +
                  vonmises.logpdf(x, 3.0 * kappa) * 0.5)


def truncnorms(x, a, b, mu, s):
    # x inside [a, b] in z
    return np.sum(truncnorm.logpdf(x, a, b, mu, s) + truncnorm.pdf(x, a, b, mu, s) * 2.0 +
                  truncnorm.cdf(x, a, b, mu, s) + truncnorm.sf(x, a, b, loc=mu, scale=s) * 0.7 +
                  truncnorm.logcdf(x, a, b, mu, s) * 1.3 + truncnorm.logsf(x, a, b, mu, s) * 0.4 +
                  truncnorm.logpdf(x, a - 3.0, b + 2.0) * 0.3 + truncnorm.cdf(x, a + 3.1, b + 4.0))


def counts(k, n, p, mu):
    # k: counts >= 1 (data); n, p and mu differentiated
    return np.sum(geom.logpmf(k, p) + geom.pmf(k, p) * 2.0 + geom.logpmf(k + 1.0, p, loc=1) +
                  nbinom.logpmf(k, n, p) + nbinom.pmf(k, n, p) * 3.0 +
                  nbinom.logpmf(k - 1.0, n, p) * 0.5 + poisson.cdf(k, mu) * 2.0 +
                  poisson.cdf(k + 0.5, mu, 1) + poisson.cdf(k - 3.0, mu))


def prob(*shape):
    return 0.5 + 0.4 * unit(*shape)


def whole(*shape):
    return np.floor(1.0 + 4.0 * (0.5 + 0.5 * unit(*shape)))


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for shapes in [((), (), ()), ((5,), (5,), ()), ((3, 4), (4,), ()), ((3, 1), (1, 4), (4,))]:
        sx, sm, ss = shapes
        yield "tails", TAILS, tails, (pos(*sx) + 0.6, prob(*sx), unit(*sm) * 0.5,
                                      pos(*ss)), [0, 1, 2, 3], False
        yield "gumbel", GUMBEL, gumbels, (any_(*sx), prob(*sx), unit(*sm), pos(*ss)), \
            [0, 1, 2, 3], False
        yield "pareto", PARETO, paretos, (pos(*sx) + 2.6, pos(*sm), prob(*sx), unit(*sm) * 0.5,
                                          pos(*ss)), [0, 1, 2, 3, 4], False
        yield "shaped-tails", SHAPED, shaped, (pos(*sx) + 0.6, pos(*sm) + 0.5,
                                               0.5 + 0.3 * unit(*sx), unit(*sm) * 0.5,
                                               1.0 + 0.1 * pos(*ss)), [0, 2, 3, 4], False
        yield "vonmises", VONMISES, vonmis, (any_(*sx), pos(*sm), unit(*sm), pos(*ss)), \
            [0, 1, 2, 3], False
        yield "counts", COUNTS, counts, (whole(*sx), pos(*sm), prob(*sm), pos(*ss) + 1.0), \
            [1, 2, 3], False
        yield "truncnorm", TRUNCNORM, truncnorms, (0.3 * unit(*sx), -1.2 - 0.2 * pos(*sm),
                                                   1.5 + 0.2 * pos(*ss), 0.1 * unit(*sm),
                                                   1.0 + 0.1 * pos(*ss)), [0, 1, 2, 3, 4], False
    # (compiled: in x and q only, each compile of the many forms costs seconds)
    yield "tails-compiled", TAILS, tails, (pos(3, 4) + 0.6, prob(3, 4), unit(4) * 0.5, pos()), \
        [0, 1], True
    yield "gumbel-compiled", GUMBEL, gumbels, (any_(4), prob(4), unit(), pos(4)), [0, 1], True
    yield "pareto-compiled", PARETO, paretos, (pos(4) + 2.6, pos(), prob(4), unit(), pos()), \
        [0, 1, 2, 3, 4], True
    yield "shaped-tails-compiled", SHAPED, shaped, (pos(4) + 0.6, pos() + 0.5,
                                                    0.5 + 0.3 * unit(4), unit(), 1.05), \
        [0, 2, 3, 4], True
    yield "vonmises-compiled", VONMISES, vonmis, (any_(4), pos(), unit(4), pos()), \
        [0, 1, 2, 3], True
    yield "counts-compiled", COUNTS, counts, (whole(4), pos(), prob(), pos() + 1.0), \
        [1, 2, 3], True
    yield "truncnorm-compiled", TRUNCNORM, truncnorms, (0.3 * unit(4), -1.3, 1.6, 0.1 * unit(4),
                                                        1.05), [0, 1, 2, 3, 4], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("k", range(7, 14))
def test_jvp_against_differences(k):
    check_jvp(CASES[k], False)


@compiles
def test_jvp_compiled():
    check_jvp(next(c for c in CASES if c[0] == "vonmises-compiled"), True)


# ---- by hand ----


def quantiles(q, mu, s):
    return expon.ppf(q, mu, s) + cauchy.ppf(q, mu, s) + logistic.isf(q, mu, s) + \
        uniform.ppf(q, mu, s)


def test_quantiles_by_hand(jit):
    # at q = 1/2: expon's y - mu = s log 2, slope s / (1 - q) = 2s; cauchy's y = mu, slope
    # s pi; logistic's y = mu, isf's slope -4s; uniform's y = mu + s/2, slope s. In mu 1
    # each; in s the standard quantiles: log 2, 0, 0, 1/2
    g = srcgrad.grad(quantiles, wrt=(0, 1, 2), jit=jit)(0.5, 0.3, 1.5)
    np.testing.assert_allclose(g, [1.5 * (2.0 + np.pi - 4.0 + 1.0), 4.0,
                                   np.log(2.0) + 0.5], rtol=1e-13)


def gumbel_at(x):
    return gumbel_r.logpdf(x) + gumbel_l.logsf(x) + gumbel_r.cdf(x)


def test_gumbel_by_hand(jit):
    # at 0: gumbel_r's l'(0) = e^0 - 1 = 0; gumbel_l's logsf = -e^z, slope -1; gumbel_r's
    # cdf' = pdf(0) = e^-1
    g = srcgrad.grad(gumbel_at, jit=jit)(0.0)
    assert g == pytest.approx(-1.0 + np.exp(-1.0), rel=1e-14)


def pareto_at(x, b):
    return pareto.logsf(x, b) + pareto.cdf(x, b)


def test_pareto_by_hand(jit):
    # at x = e, b = 2: logsf = -b log x: d/dx = -b/x, d/db = -1; cdf = 1 - x^-b: d/dx =
    # b x^(-b-1), d/db = x^-b log x = e^-2
    g = srcgrad.grad(pareto_at, wrt=(0, 1), jit=jit)(np.e, 2.0)
    np.testing.assert_allclose(g, [-2.0 / np.e + 2.0 * np.e ** -3, -1.0 + np.e ** -2],
                               rtol=1e-13)
    # below the support sf = 1, cdf = 0: no gradient in b (log z read as log max(z, 1))
    g = srcgrad.grad(pareto_at, wrt=(0, 1), jit=jit)(0.5, 2.0)
    np.testing.assert_allclose(g, [0.0, 0.0], atol=0.0)


def vonmises_at(x, kappa):
    return vonmises.logpdf(x, kappa)


def test_vonmises_by_hand(jit):
    # at x = pi/2: cos = 0, sin = 1: dx = -kappa, dkappa = -I1(kappa) / I0(kappa)
    g = srcgrad.grad(vonmises_at, wrt=(0, 1), jit=jit)(np.pi / 2, 1.5)
    np.testing.assert_allclose(g, [-1.5, -special.i1(1.5) / special.i0(1.5)], rtol=1e-13)


def geom_at(p):
    return geom.logpmf(3.0, p) + poisson.cdf(2.0, p)


def test_counts_by_hand(jit):
    # geom: 2 log(1 - p) + log p, slope -2/(1 - p) + 1/p; poisson.cdf(2, mu) slope
    # -pmf(2, mu) = -mu^2 e^-mu / 2
    g = srcgrad.grad(geom_at, jit=jit)(0.25)
    assert g == pytest.approx(-2.0 / 0.75 + 4.0 - 0.25 ** 2 * np.exp(-0.25) / 2, rel=1e-13)


def test_logsf_in_the_tail(jit):
    # expon's logsf = -z: slope -1/s, where sf itself is e^-800 (0.0 as a float)
    g = srcgrad.grad(lambda x: expon.logsf(x, 0.0, 2.0), jit=jit)(1600.0)
    assert g == pytest.approx(-0.5, rel=1e-13)


# ---- refusals ----


def chi2_df(x, df):
    return np.sum(chi2.sf(x, df))


def beta_b(x, b):
    return np.sum(beta.logcdf(x, 2.0, b))


def t_df(x, df):
    return np.sum(t.logcdf(x, df))


def geom_k(k, p):
    return np.sum(geom.logpmf(k, p))


def nbinom_k(k, n):
    return np.sum(nbinom.pmf(k, n, 0.4))


def test_shape_parameters_and_counts_are_refused(jit):
    x = np.array([0.3, 0.6])
    for fun in (chi2_df, beta_b, t_df):
        with pytest.raises(srcgrad.MissingRule, match="no closed form"):
            srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x, 2.5)
        with pytest.raises(srcgrad.MissingRule, match="no closed form"):
            srcgrad.jvp(fun, wrt=1, jit=jit)(x, 2.5, 1.0)
    for fun in (geom_k, nbinom_k):
        with pytest.raises(srcgrad.MissingRule, match="is a count"):
            srcgrad.grad(fun, wrt=(0, 1), jit=jit)(np.array([1.0, 2.0]), 0.3)


# ---- the compiled forms against SciPy's values ----


FORMS = [  # (form, SciPy's method, the arguments at which to compare)
    *[(getattr(forms, f"{d.name}_{m}"), getattr(d, m), args)
      for d in (expon, cauchy, logistic, gumbel_r, gumbel_l)
      for m in ("sf", "logsf", "logcdf", "cdf", "logpdf", "pdf", "ppf", "isf")
      if hasattr(forms, f"{d.name}_{m}")
      for args in ([(-0.5, 0.2, 1.3), (2.0, 0.0, 1.0), (10.0, 1.0, 2.0), (0.3, 0.0, -1.0)]
                   if m not in ("ppf", "isf") else
                   [(0.3, 0.2, 1.3), (0.0, 0.0, 1.0), (1.0, 0.5, 2.0), (1.5, 0.0, 1.0),
                    (1e-4, 0.0, 1.0), (0.99, 0.0, 1.0)])],
    *[(getattr(forms, f"uniform_{m}"), getattr(uniform, m), args) for m in ("cdf", "ppf")
      for args in [(0.3, 0.2, 1.3), (-1.0, 0.0, 1.0), (3.0, 0.5, 2.0), (0.5, 0.0, -1.0)]],
    *[(getattr(forms, f"pareto_{m}"), getattr(pareto, m), args)
      for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")
      for args in [(3.0, 2.5, 0.2, 1.3), (0.5, 1.0, 0.0, 1.0), (0.3, -1.0, 0.0, 1.0),
                   (0.9, 0.7, 0.0, 2.0)]],
    *[(getattr(forms, f"{d.name}_{m}"), getattr(d, m), args)
      for d in (chi2, gamma, t) for m in ("sf", "logsf", "logcdf")
      if hasattr(forms, f"{d.name}_{m}")
      for args in [(3.0, 2.5, 0.2, 1.3), (0.5, 1.0, 0.0, 1.0), (-0.3, 2.0, 0.0, 1.0),
                   (6.0, 0.7, 0.0, 2.0), (0.9, -1.0, 0.0, 2.0)]],
    *[(getattr(forms, f"beta_{m}"), getattr(beta, m), args) for m in ("sf", "logsf", "logcdf")
      for args in [(0.3, 2.5, 1.5, 0.0, 1.0), (0.9, 0.5, 3.0, 0.1, 1.2),
                   (1.5, 2.0, 2.0, 0.0, 1.0), (0.5, -1.0, 2.0, 0.0, 1.0)]],
    *[(getattr(forms, f"vonmises_{m}"), getattr(vonmises, m), args) for m in ("logpdf", "pdf")
      for args in [(0.3, 2.5, 0.2, 1.3), (3.0, 0.1, 0.0, 1.0), (-1.0, 500.0, 0.0, 1.0),
                   (0.5, -1.0, 0.0, 1.0)]],
    *[(getattr(forms, f"truncnorm_{m}"), getattr(truncnorm, m), args)
      for m in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf")
      for args in [(0.3, -1.2, 1.5, 0.2, 1.3), (2.5, 2.0, 3.0, 0.0, 1.0),
                   (-4.5, -5.0, -4.0, 0.0, 1.0), (3.5, -1.0, 2.0, 0.0, 1.0),
                   (0.5, 2.0, 1.0, 0.0, 1.0), (0.1, -1.0, 1.0, 0.0, -1.0)]],
    *[(forms.geom_logpmf, geom.logpmf, a) for a in [(3.0, 0.3, 0), (0.0, 0.3, 0),
                                                    (2.5, 0.3, 0), (4.0, 0.3, 1), (1.0, 1.0, 0),
                                                    (2.0, 1.5, 0)]],
    *[(forms.geom_pmf, geom.pmf, a) for a in [(3.0, 0.3, 0), (1.0, 0.6, 0)]],
    *[(forms.nbinom_logpmf, nbinom.logpmf, a) for a in [(3.0, 2.5, 0.3, 0), (0.0, 1.0, 0.3, 0),
                                                        (2.5, 2.0, 0.3, 0), (4.0, 0.5, 0.7, 1),
                                                        (2.0, -1.0, 0.4, 0)]],
    *[(forms.nbinom_pmf, nbinom.pmf, a) for a in [(3.0, 2.5, 0.3, 0), (0.0, 1.0, 0.3, 0)]],
    *[(forms.poisson_cdf, poisson.cdf, a) for a in [(3.0, 2.5, 0), (2.7, 1.0, 0),
                                                    (-1.0, 1.0, 0), (4.0, 3.0, 2),
                                                    (2.0, -1.0, 0)]],
]


def _compiled_together(forms, arity):
    """One compiled function of each form's arguments, in turn (`arity[i]` of them), that
    gives the forms' values: one compile for them all."""
    params = [[f"a{i}_{j}" for j in range(n)] for i, n in enumerate(arity)]
    space = {f"f{i}": form for i, form in enumerate(forms)}
    names = ", ".join(p for ps in params for p in ps)
    calls = ", ".join(f"f{i}({', '.join(ps)})" for i, ps in enumerate(params))
    exec(f"def run({names}):\n    return ({calls},)\n", space)
    return numba.njit(space["run"])


@compiles
def test_compiled_forms_give_scipys_values():
    # each form on each of its points as numbers (every form's own code: its scalar), all in
    # one compiled function; on arrays, one form of each arity (3, 4, 5), as their loops over
    # broadcast arrays are one per arity (`runtime/stats.py`'s `_broadcast`), the same for
    # every form of it but for the scalar each calls, which the numbers check
    by_form = {}
    for form, method, args in FORMS:
        by_form.setdefault(form, (method, []))[1].append(tuple(map(float, args)))
    run = _compiled_together(list(by_form), [len(p[0]) for _, p in by_form.values()])
    for k in range(max(len(p) for _, p in by_form.values())):
        points = [p[k % len(p)] for _, p in by_form.values()]
        got = run(*[a for args in points for a in args])
        for form, (method, _), args, value in zip(by_form, by_form.values(), points, got,
                                                   strict=True):
            with np.errstate(all="ignore"):
                want = method(*args)
            np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-30,
                                       err_msg=f"{form.__name__}{args}")
    arrays = [forms.expon_ppf, forms.pareto_logcdf, forms.truncnorm_logsf]
    run = _compiled_together(arrays, [3, 4, 5])
    columns = [[np.array(c) for c in zip(*by_form[form][1], strict=True)] for form in arrays]
    got = run(*[c for cs in columns for c in cs])
    for form, cs, value in zip(arrays, columns, got, strict=True):
        with np.errstate(all="ignore"):
            want = by_form[form][0](*cs)
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-30, err_msg=form.__name__)
