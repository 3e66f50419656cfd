"""srcgrad.linkonly: numba's overload implementations linked into their callers, not
emitted as machine code of their own."""

import gc
import os

import numba
import numpy as np
import pytest
from numba.extending import register_jitable

from srcgrad import linkonly, numba_ext  # noqa: F401  (numba_ext installs linkonly)

pytestmark = [pytest.mark.compiled,
              pytest.mark.skipif(not linkonly._tested_numba(), reason="numba is not 0.68"),
              pytest.mark.skipif(os.environ.get("SRCGRAD_LINK_ONLY", "").strip() == "0",
                                 reason="SRCGRAD_LINK_ONLY=0")]


@register_jitable
def _scaled_sum(x, k):
    if k < 0:
        raise ValueError("negative scale", k)
    return np.sum(x) * k


@numba.njit
def _caller(x, k):
    return _scaled_sum(x, k) + 1.0


def test_an_overload_is_linked_not_emitted_and_still_raises_with_its_values():
    assert linkonly.install()
    assert _caller(np.arange(4.0), 2) == 13.0
    # the implementation's library is kept as IR (its callers link it)
    dispatchers = [obj for obj in gc.get_objects()
                   if issubclass(type(obj), numba.core.dispatcher.Dispatcher)   # (not proxies)
                   and obj.py_func is _scaled_sum]
    assert dispatchers and all(d._srcgrad_link_only for d in dispatchers)
    cres = next(iter(dispatchers[0].overloads.values()))
    assert cres.library._srcgrad_deferred
    linked = next(iter(_caller.overloads.values())).library._linking_libraries
    assert cres.library in linked
    # a dynamic exception's values are formatted (its environment is defined)
    with pytest.raises(ValueError, match=r"negative scale.*-3"):
        _caller(np.arange(4.0), -3)
    # called from Python, the stub refuses (no crash); asked for its code, it is emitted
    with pytest.raises((RuntimeError, TypeError)):
        cres.entry_point(np.arange(4.0), 2)
    assert cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name) != 0
    assert not cres.library._srcgrad_deferred


def test_a_plain_njit_function_is_emitted_as_before():
    @numba.njit
    def plain(x):
        return _scaled_sum(x, 3)

    assert plain(np.ones(2)) == 6.0
    cres = next(iter(plain.overloads.values()))
    assert not getattr(cres.library, "_srcgrad_deferred", False)
