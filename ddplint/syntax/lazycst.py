"""libcst, imported when first used.

A run whose findings all come from the cache parses nothing, and importing libcst (building
hundreds of node classes) was most of such a run. Modules that are imported on every run name
libcst through `cst` here; its first use imports libcst, and from then on `cst` is a plain
module holding libcst's names. Modules used only once something is parsed import libcst itself.
"""

from __future__ import annotations

import types


class _Lazy(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        import libcst

        self.__dict__.update({k: v for k, v in vars(libcst).items() if not k.startswith("__")})
        self.__class__ = types.ModuleType  # attribute lookups as fast as libcst's own
        return getattr(libcst, name)


cst = _Lazy("libcst")
