"""ADBench's GMM objective at its small size, d = 2, K = 5, N = 1000: the definition, hand
gradients, JAX and autograd forms of `gmm`, other inputs."""

from .gmm import (  # noqa: F401
    WRT,
    autograd_primal,
    hand_numba,
    hand_numpy,
    jax_primal,
    make_inputs,
    primal,
)

D, K, N = 2, 5, 1000
DESCRIPTION = (f"ADBench GMM, d = {D}, K = {K}, N = {N}, loop over points; "
               f"wrt alphas, means, icf")


def inputs(rng):
    return make_inputs(rng, D, K, N)
