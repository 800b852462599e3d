FILE *open_profile(const char *home, const char *profile) {
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/.kite/%s", home, profile);
    return fopen(path, "r");
}
