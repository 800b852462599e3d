void set_hostname(struct config *cfg, const char *name) {
    while (*name == ' ')
        name++;
    snprintf(cfg->hostname, sizeof(cfg->hostname), "%s", name);
}
