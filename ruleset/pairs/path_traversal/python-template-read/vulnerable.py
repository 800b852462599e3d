def load_template(name):
    template_dir = "/srv/app/templates/"
    return open(template_dir + name).read()
