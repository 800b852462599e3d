def ping_host(host, count=3, timeout=10):
    import subprocess
    output = subprocess.check_output(["ping", "-c", str(int(count)), "--", host], timeout=timeout)
    return output.decode(errors="replace")
