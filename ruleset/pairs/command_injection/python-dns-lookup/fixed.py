def resolve(hostname):
    import subprocess
    return subprocess.run(["nslookup", "--", hostname], capture_output=True, text=True).stdout
