"""Code a project ships but did not write: vendored folders, minified files and bundled libraries.

``ouro scan`` leaves them out by default (``--vendored`` reads them), each with its reason in
``manifest.json``:
a report about jQuery's internals is not a finding in the application that bundles it. Recognised by the
folder (``vendor/``, ``vendors/``, ``third_party/``, any ``static/**/vendor``), by the name (``*.min.js``,
``jquery-3.6.0.js``, ``bootstrap.bundle.js``…), and by the first lines (a library's licence banner, ``/*!
jQuery v3.4.1``, ``@license``; or a minified file: a few lines thousands of characters long).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

__all__ = ["VENDOR_FOLDERS", "vendored_by_content", "vendored_by_path"]

VENDOR_FOLDERS = frozenset(
    {"vendor", "vendors", "third_party", "third-party", "thirdparty", "bower_components"}
)
"""Folders holding other projects' code by convention (``static/js/vendor``, ``app/vendor``)."""

_MINIFIED_NAME = re.compile(r"[.-]min\.(js|mjs|cjs|css)$", re.IGNORECASE)
_LIBRARY = re.compile(
    r"^(jquery|bootstrap|angular|react(-dom)?|vue|lodash|underscore|moment|d3|chart|three|backbone|ember|knockout"
    r"|require|modernizr|popper|select2|datatables|highcharts|tinymce|ckeditor|codemirror|socket\.io|handlebars"
    r"|mustache|swagger-ui(-bundle)?|prism|highlight|marked|purify|dompurify|zepto|raphael|sweetalert2?|axios"
    r"|htmx|alpine|leaflet|mathjax|pdf(\.worker)?|bundle|vendors?)([.-][\w.-]*)?\.(js|mjs|cjs)$",
    re.IGNORECASE,
)
_BANNER = re.compile(
    r"@license\b|@preserve\b|/\*[!*]?\s*[\w. -]+\s+v?\d+\.\d+(\.\d+)?\b.*(\(c\)|copyright|license)",
    re.IGNORECASE,
)
_SCRIPTS = (".js", ".mjs", ".cjs", ".jsx", ".ts")
LONG_LINE = 2000
"""A script line this long is minified (or generated) code, not a person's."""


def vendored_by_path(relative: str, *, is_dir: bool = False) -> str | None:
    """Why ``relative`` is other projects' code by its name or folder, or None."""
    path = PurePosixPath(relative)
    in_vendor = _in_vendor_folder(path, is_dir)
    if in_vendor is not None or is_dir:
        return in_vendor
    return _by_file_name(path.name)


def _in_vendor_folder(path: PurePosixPath, is_dir: bool) -> str | None:
    """Why the path is a vendor folder or lies in one (``vendor/``, ``third_party/``...), or None."""
    folders = path.parts if is_dir else path.parts[:-1]
    for folder in folders:
        if folder.lower() in VENDOR_FOLDERS:
            return f"left out: vendored code ({folder}/; --vendored scans it)"
    return None


def _by_file_name(name: str) -> str | None:
    """Why a file's name says it is minified code or a bundled library, or None."""
    if _MINIFIED_NAME.search(name):
        return "left out: minified code (*.min.js; --vendored scans it)"
    if _LIBRARY.match(name):
        return "left out: a bundled library file by its name (--vendored scans it)"
    return None


def vendored_by_content(relative: str, lines: Sequence[str]) -> str | None:
    """Why a script is other projects' code by its first lines (a licence banner, minified lines), or None."""
    if not relative.lower().endswith(_SCRIPTS):
        return None
    head = "\n".join(lines[:5])
    if _BANNER.search(head[:2000]):
        return "left out: a bundled library (its licence banner; --vendored scans it)"
    if _is_minified(lines):
        return "left out: minified code (lines over 2,000 characters; --vendored scans it)"
    return None


def _is_minified(lines: Sequence[str]) -> bool:
    """Whether a short script has a line over ``LONG_LINE`` characters among its first 50."""
    return any(len(line) > LONG_LINE for line in lines[:50]) and len(lines) < 200
