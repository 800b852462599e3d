void prompt_name(char *dest, size_t dest_len) {
    char name[32];
    printf("name: ");
    if (!fgets(name, sizeof(name), stdin))
        return;
    name[strcspn(name, "\n")] = '\0';
    snprintf(dest, dest_len, "%s", name);
}
