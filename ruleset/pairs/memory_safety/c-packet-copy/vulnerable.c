int read_packet(int fd, char *out, size_t out_len) {
    char buf[512];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0)
        return -1;
    memcpy(out, buf, n);
    return (int)n;
}
