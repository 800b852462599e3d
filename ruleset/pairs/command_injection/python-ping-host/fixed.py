def ping_host(host, count=3):
    import subprocess
    output = subprocess.check_output(["ping", "-c", str(int(count)), "--", host])
    return output.decode()
