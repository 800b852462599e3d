"""Entry points: the ``ouro`` CLI, the HTTP API and ops page, hook adapters, beat schedule."""

from __future__ import annotations

__all__: list[str] = []
