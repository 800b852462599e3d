void decode_query(const char *query, char *out) {
    char buffer[128];
    strcat(buffer, query);
    url_decode(buffer, out);
}
