"""scipy.stats and scipy.special, more gaps to JAX, most written (the records' `expanded`)
as the operations with rules that compute them, so `normalize` writes every call as them
and their rules differentiate it, compiled as theirs are; betabinom's rules; and the
functions of integers, with no gradient.

scipy.stats.sem(a, axis, ddof) is np.std(a, axis, ddof=ddof) / sqrt(n), of the flattened
array for axis=None; nan_policy= other than 'propagate' is refused.

scipy.stats, with z = (x - loc) / scale: gennorm(beta)'s logpdf is log(beta / 2) -
gammaln(1 / beta) - |z|^beta - log(scale) and its cdf 1/2 + sign(z) gammainc(1 / beta,
|z|^beta) / 2 (whose slope in beta, through gammainc's a, has no closed form: refused
there, as gammainc's is); wrapcauchy(c)'s pdf is (1 - c^2) / (2 pi (1 + c^2 - 2 c cos z))
/ scale on 0 <= z <= 2 pi, 0 outside; bernoulli(p)'s cdf is 0 below loc, 1 - p from loc
to loc + 1, then 1, and its ppf is loc - 1 at q = 0, loc up to 1 - p and loc + 1 above
(both steps in k and q, their slopes 0 there; NaN where p or q is outside [0, 1], as
SciPy's).

betabinom(n, a, b)'s logpmf l = log C(n, m) + betaln(m + a, n - m + b) - betaln(a, b), m =
k - loc, has dl/da = psi(m + a) - psi(n + a + b) - psi(a) + psi(a + b) and dl/db = psi(n -
m + b) - psi(n + a + b) - psi(b) + psi(a + b) (pmf: those times the pmf); the counts k and
n and loc are data, refused. Its stand-ins call SciPy's (in object mode, compiled).

No gradient (zero, as JAX's): scipy.stats.rankdata (ranks, steps in the data); and
scipy.special.bernoulli(n), the Bernoulli numbers B_0 ... B_n of an integer n, is a
constructor (a value being differentiated may not reach it).
"""

from scipy import special, stats

from ..errors import RuleError
from ..runtime import unbroadcast
from ..runtime.stats_gaps2 import betabinom_logpmf, betabinom_pmf
from . import NOT_CONSTANT, constructor, describe, nondifferentiable, rule, tangent

NEEDS = ("scipy.special", "scipy.stats")   # SciPy modules this imports (rules/__init__)


def _literal(name, option, value):
    if value is NOT_CONSTANT:
        raise RuleError(f"{name}'s {option}= is differentiated as a literal")
    return value


# ---- scipy.stats.sem ----


def _sem(given):
    policy = _literal("scipy.stats.sem", "nan_policy", given.get("nan_policy", "propagate"))
    if policy != "propagate":
        raise RuleError(f"scipy.stats.sem(..., nan_policy={policy!r}) is not "
                        f"differentiated: nan_policy='propagate'")
    ddof = "ddof" if "ddof" in given else "1"
    keep = ", keepdims=keepdims" if "keepdims" in given else ""
    if "axis" in given and given["axis"] is None:
        return f"np.std(a, ddof={ddof}{keep}) / np.sqrt(np.size(a))"
    axis = "axis" if "axis" in given else "0"
    return f"np.std(a, axis={axis}, ddof={ddof}{keep}) / np.sqrt(np.shape(a)[{axis}])"


describe(stats.sem, expanded=_sem)


# ---- scipy.stats: gennorm, wrapcauchy, bernoulli ----


def _located(given, x):
    """z's source: (x - loc) / scale with the options the call gives."""
    z = f"({x} - loc)" if "loc" in given else x
    return f"({z} / scale)" if "scale" in given else z


def _per_scale(given):
    return " - np.log(scale)" if "scale" in given else ""


def _gennorm_signature(x, beta, loc=0.0, scale=1.0):
    """gennorm's methods' signature, which normalize binds a call to."""


def _gennorm_logpdf(given):
    z = _located(given, "x")
    return (f"np.log(0.5 * beta) - special.gammaln(1.0 / beta) - np.abs({z}) ** beta"
            f"{_per_scale(given)}"), {"special": special}


def _gennorm_pdf(given):
    source, helpers = _gennorm_logpdf(given)
    return f"np.exp({source})", helpers


def _gennorm_cdf(given):
    z = _located(given, "x")
    return (f"0.5 + 0.5 * np.sign({z}) * special.gammainc(1.0 / beta, np.abs({z}) ** beta)",
            {"special": special})


def _wrapcauchy_signature(x, c, loc=0.0, scale=1.0):
    """wrapcauchy's methods' signature, which normalize binds a call to."""


def _wrapcauchy(log):
    def expanded(given):
        z = _located(given, "x")
        inside = f"({z} >= 0.0) & ({z} <= 2.0 * np.pi)"
        value = (f"np.log(1.0 - c * c) - np.log(2.0 * np.pi) - "
                 f"np.log(1.0 + c * c - 2.0 * c * np.cos({z})){_per_scale(given)}")
        if log:
            return f"np.where({inside}, {value}, -np.inf)"
        return f"np.where({inside}, np.exp({value}), 0.0)"
    return expanded


def _bernoulli_signature(k, p, loc=0):
    """bernoulli's methods' signature, which normalize binds a call to."""


def _bernoulli_ppf_signature(q, p, loc=0):
    """bernoulli.ppf's signature, which normalize binds a call to."""


def _bernoulli_cdf(given):
    k = "(k - loc)" if "loc" in given else "k"
    return (f"np.where((p >= 0.0) & (p <= 1.0), np.where({k} < 0.0, 0.0, "
            f"np.where({k} < 1.0, 1.0 - p, 1.0)), np.nan)")


def _bernoulli_ppf(given):
    loc = " + loc" if "loc" in given else ""
    return (f"np.where((p >= 0.0) & (p <= 1.0) & (q >= 0.0) & (q <= 1.0), "
            f"np.where(q == 0.0, -1.0, np.where(q <= 1.0 - p, 0.0, 1.0)), np.nan){loc}")


for _method, _how, _signature in [
        (stats.gennorm.logpdf, _gennorm_logpdf, _gennorm_signature),
        (stats.gennorm.pdf, _gennorm_pdf, _gennorm_signature),
        (stats.gennorm.cdf, _gennorm_cdf, _gennorm_signature),
        (stats.wrapcauchy.logpdf, _wrapcauchy(True), _wrapcauchy_signature),
        (stats.wrapcauchy.pdf, _wrapcauchy(False), _wrapcauchy_signature),
        (stats.bernoulli.cdf, _bernoulli_cdf, _bernoulli_signature),
        (stats.bernoulli.ppf, _bernoulli_ppf, _bernoulli_ppf_signature)]:
    describe(_method, expanded=_how, signature=_signature)


# ---- betabinom: l = log C(n, m) + betaln(m + a, n - m + b) - betaln(a, b), m = k - loc ----

_COUNT = "a count (data), with no gradient"
_COUNTS = {"k": _COUNT, "n": _COUNT, "loc": _COUNT}


@rule(stats.betabinom.logpmf, betabinom_logpmf, called_as=betabinom_logpmf,
      no_gradient=_COUNTS)
def betabinom_logpmf_rule(dy, y, k, n, a, b, loc):
    return (None, None,
            unbroadcast(dy * (special.psi(k - loc + a) - special.psi(n + a + b) -
                              special.psi(a) + special.psi(a + b)), a),
            unbroadcast(dy * (special.psi(n - k + loc + b) - special.psi(n + a + b) -
                              special.psi(b) + special.psi(a + b)), b),
            None)


@tangent(stats.betabinom.logpmf, betabinom_logpmf)
def betabinom_logpmf_tangent(dx, y, k, n, a, b, loc):
    return (None, None,
            dx * (special.psi(k - loc + a) - special.psi(n + a + b) - special.psi(a) +
                  special.psi(a + b)),
            dx * (special.psi(n - k + loc + b) - special.psi(n + a + b) - special.psi(b) +
                  special.psi(a + b)),
            None)


@rule(stats.betabinom.pmf, betabinom_pmf, called_as=betabinom_pmf, no_gradient=_COUNTS)
def betabinom_pmf_rule(dy, y, k, n, a, b, loc):
    return (None, None,
            unbroadcast(dy * y * (special.psi(k - loc + a) - special.psi(n + a + b) -
                                  special.psi(a) + special.psi(a + b)), a),
            unbroadcast(dy * y * (special.psi(n - k + loc + b) - special.psi(n + a + b) -
                                  special.psi(b) + special.psi(a + b)), b),
            None)


@tangent(stats.betabinom.pmf, betabinom_pmf)
def betabinom_pmf_tangent(dx, y, k, n, a, b, loc):
    return (None, None,
            dx * y * (special.psi(k - loc + a) - special.psi(n + a + b) - special.psi(a) +
                      special.psi(a + b)),
            dx * y * (special.psi(n - k + loc + b) - special.psi(n + a + b) - special.psi(b) +
                      special.psi(a + b)),
            None)


# ---- no gradient ----

nondifferentiable(stats.rankdata)
constructor(special.bernoulli)
