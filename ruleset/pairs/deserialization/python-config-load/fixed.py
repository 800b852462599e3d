def load_config(path):
    import yaml
    with open(path) as handle:
        return yaml.safe_load(handle)
