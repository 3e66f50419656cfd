"""srcgrad: source-to-source gradients of Python/NumPy functions, compiled with numba.

    >>> import srcgrad
    >>> @srcgrad.grad(wrt=("x", "y"))
    ... def f(x, y):
    ...     return x**2 + x*y + 3.0
    >>> f(5.0, 3.0)
    (13.0, 5.0)
"""

from . import allocator  # noqa: F401  (fixes glibc malloc's thresholds: see its docstring)
from .annotations import (
    adjoint,
    grad_of,
    gradient_override,
    identity,
    register_gradient,
    stop_gradient,
)
from .api import grad, hvp, jvp, source, value_and_grad, vjp
from .checks import check_grad
from .dense import hessian, jacobian
from .errors import (
    JitFallbackWarning,
    MissingRule,
    NonScalarOutput,
    NoSourceError,
    RecursiveFunction,
    RuleError,
    SrcgradError,
    UnsupportedSyntax,
    WrtError,
)

__version__ = "0.1.0"

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "hvp", "hessian", "jacobian", "source",
    "check_grad",
    "stop_gradient", "identity", "register_gradient", "gradient_override", "adjoint", "grad_of",
    "SrcgradError", "UnsupportedSyntax", "NoSourceError", "MissingRule", "WrtError",
    "NonScalarOutput", "RuleError", "RecursiveFunction", "JitFallbackWarning",
]
