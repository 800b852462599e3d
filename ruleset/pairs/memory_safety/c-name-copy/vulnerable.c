void set_hostname(struct config *cfg, const char *name) {
    char tmp[64];
    strcpy(tmp, name);
    strncpy(cfg->hostname, tmp, sizeof(cfg->hostname));
}
