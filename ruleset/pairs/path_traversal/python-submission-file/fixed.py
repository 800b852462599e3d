def read_submission(root, course, filename):
    from pathlib import Path
    base = (Path(root) / course).resolve()
    target = (base / filename).resolve()
    if base not in target.parents:
        raise PermissionError(filename)
    return target.read_bytes()
