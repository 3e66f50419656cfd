"""runtime: the helpers generated gradient code calls.

Each public helper is a plain NumPy function, which is what runs under ``jit=False``,
and has a numba overload with the same meaning, which is what runs under
``numba.njit``. The overload picks its implementation at numba compile time from the
argument types (scalar or array, ndim), so one generated source serves both modes and
the compiled code carries no runtime type dispatch. Importing this module registers the
overloads, those of `numba_ext` for the NumPy forms generated code uses, and those
`import srcgrad` deferred (`deferred`).

Conventions: a 0-d array counts as a scalar; gradients have the floating dtype of the
cotangent (float64 for integer data); the adjoint of a reduction accepts the reduced
cotangent with or without kept dimensions (numba tells them apart by rank, so
``keepdims`` need not be a constant there).

The helpers are grouped by topic, each beside its numba form: `broadcasting` (and
`common`), `reductions`, `indexing`, `tapes`, `matmul`, `sequences`, `lists` (the
arrays that hold lists appended to in loops), and `kernels` (the
`@elementwise` functions fusion makes). This package exports them all. Helpers are
module-level functions with overloads, not closures made per call, so numba compiles each
once per signature and every caller shares it.
"""

from .. import deferred, numba_ext  # noqa: F401  (numba_ext registers NumPy forms)
from . import compiled  # noqa: F401  (the cached wrappers jit_module binds)
from .broadcasting import (  # noqa: F401
    COMPLEX_RESULT,
    broadcast_like,
    checked_grad,
    checking,
    like_broadcast,
    reshape_as,
    reshaped,
    seed,
    tree_vdot,
    unbroadcast,
    unit,
    where,
    zeros_like,
)
from .common import formatted  # noqa: F401
from .indexing import (  # noqa: F401
    add_at,
    first_index,
    put_flat,
    scattered,
    take_along_axis_grad,
    take_grad,
    written_grad,
)
from .kernels import (  # noqa: F401
    elementwise,
    jit_kernel,
)
from .lists import (  # noqa: F401
    fill_row,
    filled,
    row_grad,
    stacked,
)
from .matmul import (  # noqa: F401
    add_matmul_lhs_grad,
    add_matmul_rhs_grad,
    matmul_jvp,
    matmul_lhs_grad,
    matmul_lhs_grad_jvp,
    matmul_lhs_grad_tangent,
    matmul_rhs_grad,
    matmul_rhs_grad_jvp,
    matmul_rhs_grad_tangent,
    matmul_sum,
    matmul_tangent,
)
from .reductions import (  # noqa: F401
    extremum_grad,
    like_reduced,
    mean_grad,
    sum_grad,
)
from .scalarised import scalarised  # noqa: F401
from .sequences import (  # noqa: F401
    add_items,
    split_like,
    unstack_like,
)
from .tapes import (  # noqa: F401
    TAPE_SHAPE_CHANGED,
    in_place_array,
    new_tape,
    record,
    retake,
    retake_grad,
    same_shape,
    snapshot,
    unaliased,
    unshared,
)

deferred.load()   # (numba is imported by now: `import srcgrad` deferred what it could)
