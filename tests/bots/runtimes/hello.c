/* A hello-world protocol bot in C: names itself, plays rock until "end". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) return 0;
    puts("{\"name\": \"hello-c\"}");
    fflush(stdout);
    while (getline(&line, &cap, stdin) >= 0 && !strstr(line, "\"end\"")) {
        puts("{\"real_move\": \"rock\"}");
        fflush(stdout);
    }
    free(line);
    return 0;
}
