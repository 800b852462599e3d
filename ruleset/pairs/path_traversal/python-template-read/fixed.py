def load_template(name):
    import os
    template_dir = "/srv/app/templates/"
    if os.path.basename(name) != name:
        raise ValueError("bad template name")
    return open(template_dir + name).read()
