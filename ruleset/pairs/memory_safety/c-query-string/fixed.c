void decode_query(const char *query, char *out, size_t out_len) {
    char buffer[128];
    snprintf(buffer, sizeof(buffer), "%s", query);
    url_decode_n(buffer, out, out_len);
}
