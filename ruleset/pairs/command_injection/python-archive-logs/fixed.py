def archive_logs(directory, label):
    import subprocess
    target = "/var/backups/%s.tar.gz" % label
    subprocess.run(["tar", "czf", target, "--", directory], check=True)
    return target
