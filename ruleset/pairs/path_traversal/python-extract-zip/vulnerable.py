def extract_bundle(archive_path, dest):
    import os
    import zipfile
    with zipfile.ZipFile(archive_path) as bundle:
        for member in bundle.namelist():
            target = os.path.join(dest, member)
            with open(target, "wb") as out:
                out.write(bundle.read(member))
