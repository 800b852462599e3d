void log_message(FILE *log, const char *user_msg) {
    char line[256];
    snprintf(line, sizeof(line), "[netstack] %s", user_msg);
    fputs(line, log);
}
