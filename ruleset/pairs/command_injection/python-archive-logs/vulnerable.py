def archive_logs(directory, label):
    import os
    target = "/var/backups/%s.tar.gz" % label
    os.system("tar czf " + target + " " + directory)
    return target
