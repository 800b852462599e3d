"""REPEAT-FAILURE: a harness run that repeats one failing tool call, unchanged, more times in a row than
a knee measured from the runs; the streak is counted by a recursive rule."""
