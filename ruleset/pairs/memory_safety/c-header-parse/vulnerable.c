int parse_header(const char *line, char *key, char *value) {
    const char *colon = strchr(line, ':');
    if (!colon)
        return -1;
    memcpy(key, line, colon - line);
    key[colon - line] = '\0';
    strcpy(value, colon + 2);
    return 0;
}
