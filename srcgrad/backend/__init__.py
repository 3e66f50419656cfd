"""backend: how generated code runs.

`forms.Forms` holds a generated module's Python form and compiled form and picks one per
call (`jit=False`, `True`, `"auto"`: tiers, the fallback warning; `forms.eager` makes
calls compile in the foreground); `background` is the thread that compiles behind the
caller; `compile.jit_module` compiles a module with numba (and the user functions it
calls), `compile.compile_for` for given arguments, logging each compile;
`locations` maps a failure of generated code back to the user's `file:line`; `modules`
keeps the generated modules on disk, so that a second process skips the compiler; `cache`
bounds the disk cache (least recently used entries go) and reports and empties it;
`taken` tells whether the globals a module took still hold. The
generated sources' files and the fingerprints that key them are `codegen`'s.
"""

from .compile import NESTED
from .forms import Forms, eager
from .locations import first_line

__all__ = ["NESTED", "Forms", "eager", "first_line"]
