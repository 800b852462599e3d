def clone_repo(url, branch, workdir):
    import subprocess
    cmd = ["git", "clone", "--depth", "1", "-b", branch, "--", url, workdir]
    return subprocess.Popen(cmd).wait()
