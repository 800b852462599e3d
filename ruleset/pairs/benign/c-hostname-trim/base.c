void set_hostname(struct config *cfg, const char *name) {
    snprintf(cfg->hostname, sizeof(cfg->hostname), "%s", name);
}
