"""Lazy re-exports for a package's ``__init__``: the names its ``if TYPE_CHECKING:`` block imports are read
from their modules on first use, so importing the package (or one light module of it) loads nothing else.

The block is the one list of what the package re-exports: mypy reads it as plain imports, and at run time
``reexport`` reads it from the package's own source (once, on the first name asked for)::

    if TYPE_CHECKING:
        from pkg.light import a
        from pkg.heavy import B

    __getattr__ = reexport(__name__, __file__)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any

__all__ = ["reexport"]


def _homes(source: str) -> dict[str, str]:
    """``name -> module`` for every ``from module import name`` inside ``if TYPE_CHECKING:``."""
    import ast  # once per package, on its first name asked for: importing a package stays light

    homes: dict[str, str] = {}
    with open(source, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module:
                    homes.update({alias.asname or alias.name: item.module for alias in item.names})
    return homes


def reexport(package: str, source: str, whole: frozenset[str] = frozenset()) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: a re-exported name is imported from its home on first use and
    bound in the package. A name in ``whole`` (a registry the package's modules fill as they load) is bound
    only once every home is imported, so whoever reads it sees it whole; any other name loads its own home
    alone. Any other name is an ``AttributeError``, so a submodule's name falls through to the import
    system."""
    homes: dict[str, str] = {}

    def __getattr__(name: str) -> Any:
        if not homes:
            homes.update(_homes(source))
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
