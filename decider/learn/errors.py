"""Errors of the learning pipeline.

LearnError (schemas.errors.PermanentError)   bad input to labels, folds, compile or an experiment
├── SourceNotAllowed                  a source is not in the allow-list (it was never opened)
├── CatalogError                      a pair's catalog.toml is wrong (names file and field)
├── RegistrationError                 an experiment's manifest or units file is not registrable
└── Unfinished                        a budget ceiling stopped a compile or an experiment arm
"""

from __future__ import annotations

from ouroboros_gates.schemas.errors import PermanentError

__all__ = ["CatalogError", "LearnError", "RegistrationError", "SourceNotAllowed", "Unfinished"]


class LearnError(PermanentError):
    """Input to the learning pipeline is wrong; the message names where."""


class SourceNotAllowed(LearnError):
    """A label source is not listed in sources.toml, so it is never opened."""


class CatalogError(LearnError):
    """A catalog.toml is malformed; the message names the file and the field."""


class RegistrationError(LearnError):
    """An experiment cannot be registered or run as registered."""


class Unfinished(LearnError):
    """A budget ceiling was hit: no artifact and no number."""
