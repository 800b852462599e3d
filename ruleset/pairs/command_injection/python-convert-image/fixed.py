def make_thumbnail(src_path, width):
    import subprocess
    dest = src_path + ".thumb.png"
    subprocess.call(["convert", src_path, "-resize", f"{int(width)}x", dest])
    return dest
