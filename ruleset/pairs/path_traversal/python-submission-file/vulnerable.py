def read_submission(root, course, filename):
    from pathlib import Path
    return (Path(root) / course / filename).read_bytes()
