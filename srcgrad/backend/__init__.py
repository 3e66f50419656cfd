"""backend: how generated code runs.

`forms.Forms` holds a generated module's Python form and compiled form and picks one per
call (`jit=False`, `True`, `"auto"`: tiers, the race, the fallback warning);
`compile.jit_module` compiles a module with numba (and the user functions it calls);
`locations` maps a failure of generated code back to the user's `file:line`. The disk
cache of generated sources and the fingerprints that key it are `codegen`'s.
"""

from .compile import NESTED
from .forms import Forms
from .locations import first_line

__all__ = ["NESTED", "Forms", "first_line"]
