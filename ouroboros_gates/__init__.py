"""Ouroboros: turns AI coding agents' real mistakes into gates, with proof, and judges every push.

One import package: ``schemas``, ``harness``, ``forge``, ``llm``, ``events``, ``miners``, ``decider``,
``workers``, ``ops`` and ``ruleset`` are its subpackages, and ``examples`` the sample corpus the main job
runs on, and ``docs`` the guides the commands cite. In a checkout they are the repository's top-level
folders, linked from here; a wheel holds them in place. Importing this package imports nothing else: the
hook's every tool call passes through it.
"""

__version__ = "0.2.0"
