int parse_header(const char *line, char *key, size_t key_len, char *value, size_t value_len) {
    const char *colon = strchr(line, ':');
    if (!colon || (size_t)(colon - line) >= key_len)
        return -1;
    memcpy(key, line, colon - line);
    key[colon - line] = '\0';
    snprintf(value, value_len, "%s", colon[1] == ' ' ? colon + 2 : colon + 1);
    return 0;
}
