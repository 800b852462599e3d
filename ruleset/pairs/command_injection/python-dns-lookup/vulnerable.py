def resolve(hostname):
    import os
    stream = os.popen("nslookup " + hostname)
    return stream.read()
