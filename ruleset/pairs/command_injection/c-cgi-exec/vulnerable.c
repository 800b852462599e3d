int run_cgi(const char *script, const char *args) {
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "/usr/lib/cgi-bin/%s %s", script, args);
    return system(cmd);
}
