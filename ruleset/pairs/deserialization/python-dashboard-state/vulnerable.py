def load_dashboard(blob):
    import marshal
    return marshal.loads(blob)
