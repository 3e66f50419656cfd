"""A shape check numba leaves out: `a += b` (and every ufunc given its output array, as
`np.add(a, b, out=a)`) on arrays whose shapes do not broadcast onto the output's.

NumPy raises `ValueError` there; numba (up to at least 0.68, numba issues #4542 and #9166)
runs the loop over the output's shape and reads past the end of the smaller input, giving
garbage and no error. Generated adjoints accumulate with `dx += e` everywhere, so a shape
that srcgrad got wrong would be a silently wrong compiled gradient where the Python form
raises. With this module imported, the compiled code checks, as NumPy does, that each
array input broadcasts onto the output, and raises the `ValueError` NumPy would.

It wraps `numba.np.npyimpl.numpy_ufunc_kernel`, which numba's lowering of every ufunc and
array operator calls by its module name (numba 0.59 to 0.68), so wrapping it once, before
anything is compiled, reaches every in-place operator. Importing it twice wraps once.
"""

from __future__ import annotations

from numba.core import types, typing
from numba.np import npyimpl


def _fits(out, a):   # (compiled by numba into the caller: `out`'s shape is the loop's)
    if a.ndim > out.ndim:
        raise ValueError("non-broadcastable output operand: the input has more dimensions "
                         "than the output it is written into")
    for k in range(1, a.ndim + 1):
        if a.shape[a.ndim - k] != 1 and a.shape[a.ndim - k] != out.shape[out.ndim - k]:
            raise ValueError("non-broadcastable output operand: an input's shape does not "
                             "broadcast to the output's it is written into")


def _checked(kernel):
    def numpy_ufunc_kernel(context, builder, sig, args, ufunc, kernel_class):
        outputs = range(ufunc.nin, len(args))   # the outputs the call was given
        for k in outputs:
            out_ty = sig.args[k]
            if not isinstance(out_ty, types.Array):
                continue
            for i in range(ufunc.nin):
                if isinstance(sig.args[i], types.Array):
                    context.compile_internal(
                        builder, _fits, typing.signature(types.none, out_ty, sig.args[i]),
                        [args[k], args[i]])
        return kernel(context, builder, sig, args, ufunc, kernel_class)
    numpy_ufunc_kernel.srcgrad_checked = True
    numpy_ufunc_kernel.__wrapped__ = kernel
    return numpy_ufunc_kernel


if not getattr(npyimpl.numpy_ufunc_kernel, "srcgrad_checked", False):
    npyimpl.numpy_ufunc_kernel = _checked(npyimpl.numpy_ufunc_kernel)
