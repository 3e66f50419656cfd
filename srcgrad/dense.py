"""dense: `hessian` and `jacobian`, derivatives built whole from one forward (or reverse)
pass per column (row) of the transforms in `api`."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .api import Kind, Options, Source, Transform, _module_attribute, _token
from .calls import direction, plain, unit_like
from .errors import SrcgradError
from .frontend.portable import portable
from .passes.pytrees import is_container


def hessian(fun=None, *, wrt=0, jit="auto", unroll=False):
    """The dense Hessian of scalar `f`: shape `x.shape + x.shape` (nested tuples of blocks
    for a tuple `wrt`), one `hvp` per entry of the `wrt` arguments."""
    if fun is None:
        return lambda f: hessian(f, wrt=wrt, jit=jit, unroll=unroll)
    return Dense(fun, "hessian", wrt, jit, unroll)


def jacobian(fun=None, *, wrt=0, jit="auto", unroll=False):
    """The Jacobian of `f`: shape `f(x).shape + x.shape` (a tuple for a tuple `wrt`).

    Built a column at a time with `jvp`, or a row at a time with the pullback of `vjp`,
    whichever takes fewer passes for the arguments given."""
    if fun is None:
        return lambda f: jacobian(f, wrt=wrt, jit=jit, unroll=unroll)
    return Dense(fun, "jacobian", wrt, jit, unroll)


class Dense:
    """`hessian` and `jacobian`: a dense derivative, one forward (or reverse) pass per
    column (row); `.source` shows the generated code the passes run."""

    def __init__(self, fun, kind: str, wrt, jit, unroll):
        functools.update_wrapper(self, fun)
        self._given = (fun, kind, wrt, jit, unroll)
        self.fun, self.kind, self._many = fun, kind, isinstance(wrt, (tuple, list))
        options = Options(wrt, jit, unroll=unroll)
        if kind == "hessian":
            self._forward = Transform(fun, Kind.HVP, options)
            self._reverse = None
        else:
            self._forward = Transform(fun, Kind.JVP, options)
            self._reverse = Transform(fun, Kind.VJP, options) \
                if not isinstance(fun, Transform) else None
        self.wrt = self._forward.wrt

    @property
    def source(self) -> Source:
        """The generated code of the passes (forward mode; and reverse for a Jacobian)."""
        parts = [self._forward.source]
        if self._reverse is not None:
            parts.append(self._reverse.source)
        return Source("\n\n".join(parts))

    def __call__(self, *args, **kwargs):
        t = self._forward
        values = t._args(args, kwargs)
        if any(is_container(values[t._params.index(w)]) for w in self.wrt if w in t._params):
            raise SrcgradError(f"{self.kind} of {self.fun.__qualname__}: a container argument "
                               f"(tuple, list, dict, ...) has no one nesting of blocks; pass "
                               f"its arrays as arguments, or use hvp/jvp with the container")
        inputs = [np.asarray(values[t._params.index(w)], dtype=float) for w in self.wrt]
        if self.kind == "jacobian" and self._reverse is not None:
            value, pullback = self._reverse(*values)
            if np.size(value) < sum(x.size for x in inputs):
                return self._rows(np.asarray(value), pullback, inputs)
        blocks = []  # blocks[j]: the derivative along each entry of input j
        for j, x in enumerate(inputs):
            columns = []
            for k in range(x.size):
                out = t(*values, direction(inputs, j, k, self._many))
                columns.append(out[1] if self.kind == "jacobian" else out)
            blocks.append(columns)
        if self.kind == "jacobian":
            out = [_from_columns(cols, x) for cols, x in zip(blocks, inputs, strict=True)]
            return tuple(out) if self._many else out[0]
        # hessian: blocks[j][k] holds, per input i, d grad_i / d x_j[k]
        rows = []
        for i in range(len(inputs)):
            row = [_from_columns([c[i] if self._many else c for c in blocks[j]], inputs[j])
                   for j in range(len(inputs))]
            rows.append(tuple(row) if self._many else row[0])
        return tuple(rows) if self._many else rows[0]

    def _rows(self, value, pullback, inputs):
        rows = [pullback(unit_like(value, k)) for k in range(value.size)]
        out = []
        for i, x in enumerate(inputs):
            stacked = np.array([np.asarray(r[i] if self._many else r, dtype=float)
                                for r in rows]).reshape(value.shape + x.shape)
            out.append(plain(stacked))
        return tuple(out) if self._many else out[0]

    def __repr__(self) -> str:
        return (f"<srcgrad.{self.kind} of {self.fun.__qualname__} wrt {', '.join(self.wrt)}, "
                f"{self._forward.state}>")

    def __reduce__(self):
        if _module_attribute(self) is self:
            return self.__qualname__
        return Dense, (portable(self._given[0]), *self._given[1:])

    def __dask_tokenize__(self):
        fun, kind, wrt, jit, unroll = self._given
        return ("srcgrad", kind, repr((wrt, jit, unroll)), _token(fun))


def _from_columns(columns: list, x: np.ndarray) -> Any:
    """Derivatives along each entry of `x` -> an array of shape out.shape + x.shape."""
    cols = [np.asarray(c, dtype=float) for c in columns]
    shape = cols[0].shape if cols else ()
    return plain(np.stack(cols, axis=-1).reshape(shape + x.shape) if cols else
                 np.zeros(x.shape))
