void prompt_name(char *dest) {
    char name[32];
    printf("name: ");
    gets(name);
    strcpy(dest, name);
}
