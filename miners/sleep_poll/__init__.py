"""SLEEP-POLL: a harness run that waits by polling: the same command after a ``sleep`` more times than a
knee measured from the runs, or one ``while``/``until`` loop that sleeps."""
