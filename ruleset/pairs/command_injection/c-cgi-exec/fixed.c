int run_cgi(const char *script, const char *args) {
    char path[256];
    snprintf(path, sizeof(path), "/usr/lib/cgi-bin/%s", script);
    char *const argv[] = {path, (char *)args, NULL};
    return spawn_and_wait(path, argv);
}
