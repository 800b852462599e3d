def save_avatar(media_root, username, upload):
    import os
    safe_name = os.path.basename(upload.name).replace("..", "")
    destination = os.path.join(media_root, "avatars", f"{username}-{safe_name}")
    with open(destination, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return destination
