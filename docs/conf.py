"""Sphinx configuration of the documentation site (Markdown through MyST): ``sphinx-build -W docs site``."""

from __future__ import annotations

from ouroboros_gates import __version__

project = "Ouroboros"
author = "The Ouroboros authors"
copyright = "the Ouroboros authors, Apache License 2.0"
release = version = __version__

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "generate.py"]
myst_heading_anchors = 4  # links like loop.md#h-fleet-floor resolve to the heading's slug
myst_enable_extensions = ["colon_fence"]
html_theme = "alabaster"


def setup(app: object) -> None:
    """Rules files are Soufflé-like Datalog: shown as Prolog, the nearest lexer Pygments has."""
    from pygments.lexers import PrologLexer
    from sphinx.highlighting import lexers

    lexers["datalog"] = PrologLexer()


html_title = f"Ouroboros {__version__}"
