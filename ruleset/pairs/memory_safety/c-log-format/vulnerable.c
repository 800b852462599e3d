void log_message(FILE *log, const char *user_msg) {
    char line[256];
    sprintf(line, "[netstack] %s", user_msg);
    fprintf(log, line);
}
