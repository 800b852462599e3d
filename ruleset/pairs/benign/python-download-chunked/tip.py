def download(base_dir, filename, limit=None):
    import os
    path = os.path.realpath(os.path.join(base_dir, filename))
    if not path.startswith(os.path.realpath(base_dir) + os.sep):
        raise PermissionError(filename)
    with open(path, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)
