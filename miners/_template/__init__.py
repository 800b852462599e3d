"""The template miner, DRAFT-PR-LATE: a harness run whose work stayed invisible to the operator (no
draft pull request) for longer than a knee measured from the runs themselves. Copy it with
``ouro miner new NAME``."""
