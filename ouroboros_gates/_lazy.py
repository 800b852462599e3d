"""Lazy re-exports, the one mechanism every package's ``__init__`` uses: a name is imported from its home
module on first use, so importing a package (or one light module of it) loads nothing else.

A package lists its names twice, on purpose: in an ``if TYPE_CHECKING:`` block of plain imports, which mypy
reads, and in ``_HOMES`` (name -> module), which this reads at run time; a test holds the two to the same::

    if TYPE_CHECKING:
        from pkg.light import a

    _HOMES = {"a": "pkg.light"} __getattr__ = lazy(__name__, _HOMES)

Standard library only and no ``typing`` at run time: the hook passes through it on every tool call.
"""

from __future__ import annotations

import sys
from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy"]


def lazy(package: str, homes: Mapping[str, str], whole: frozenset[str] = frozenset()) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: a name of ``homes`` is imported from its module on first use and
    bound in the package (with the other names of that module). A name in ``whole`` (a registry the package's
    modules fill as they load) is bound only once every home is imported, so whoever reads it sees it whole.
    Any other name is an ``AttributeError``, so a submodule's name falls through to the import system."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace = vars(sys.modules[package])
        if name in namespace:  # a registry asked for again by the package's own code
            return namespace[name]
        for module in dict.fromkeys(homes.values()) if name in whole else (home,):
            loaded = import_module(module)
            for known, where in homes.items():
                if where == module and known not in namespace and (known not in whole or name in whole):
                    namespace[known] = getattr(loaded, known)
        return namespace[name]

    return __getattr__
