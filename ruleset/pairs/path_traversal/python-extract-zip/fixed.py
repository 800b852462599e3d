def extract_bundle(archive_path, dest):
    import os
    import zipfile
    with zipfile.ZipFile(archive_path) as bundle:
        for member in bundle.namelist():
            target = os.path.realpath(os.path.join(dest, member))
            if not target.startswith(os.path.realpath(dest) + os.sep):
                continue
            with open(target, "wb") as out:
                out.write(bundle.read(member))
