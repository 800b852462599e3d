"""Data, not code: the decider's quick rules (``rules/``), semantic vocabularies (``semantic/``), families and
frameworks, model manifests (``models/``), the label-source allow-list (``sources.toml``), the compile spec,
the packaged decision programs (``programs/``), the seed memory (``memory/``) and the seeded pairs
(``pairs/``). A package only so that ``importlib.resources.files("ouroboros_gates.ruleset")`` finds it
installed as in a checkout."""
