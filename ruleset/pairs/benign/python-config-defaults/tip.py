def load_config(path, defaults=None):
    import yaml
    with open(path) as handle:
        loaded = yaml.safe_load(handle) or {}
    return {**(defaults or {}), **loaded}
