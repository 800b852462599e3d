FILE *open_profile(const char *home, const char *profile) {
    char path[PATH_MAX];
    if (strchr(profile, '/') || strstr(profile, ".."))
        return NULL;
    snprintf(path, sizeof(path), "%s/.kite/%s", home, profile);
    return fopen(path, "r");
}
