"""``python -m ouroboros_gates.ops.cli``: the ``ouro`` command without its console script."""

from ouroboros_gates.ops.cli import main

main()
