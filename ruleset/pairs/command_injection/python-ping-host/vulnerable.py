def ping_host(host, count=3):
    import subprocess
    output = subprocess.check_output("ping -c %d %s" % (count, host), shell=True)
    return output.decode()
