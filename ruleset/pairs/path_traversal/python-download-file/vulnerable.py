def download(base_dir, filename):
    import os
    path = os.path.join(base_dir, filename)
    with open(path, "rb") as handle:
        return handle.read()
