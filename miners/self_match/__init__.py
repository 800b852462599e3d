"""SELF-MATCH: a Bash call whose ``pgrep -f``/``pkill -f`` pattern also matches the command line of the
shell running it, so it reports or kills itself. A deny gate on the pending call."""
