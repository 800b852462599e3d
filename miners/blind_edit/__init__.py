"""BLIND-EDIT: an Edit whose old string was not found, retried on the same file without reading it again,
and not found again. A warning about the run: the agent edits from a memory of the file it no longer has."""
