def save_avatar(media_root, username, upload):
    import os
    destination = os.path.join(media_root, "avatars", upload.name)
    with open(destination, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return destination
