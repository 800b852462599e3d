def make_thumbnail(src_path, width):
    import subprocess
    dest = src_path + ".thumb.png"
    subprocess.call(f"convert {src_path} -resize {width}x {dest}", shell=True)
    return dest
