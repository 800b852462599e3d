def load_config(path):
    import yaml
    with open(path) as handle:
        return yaml.load(handle, Loader=yaml.Loader)
