/* minimal-c: the fastest possible bot, for benchmarking the referee.
 *
 * It answers "rock" to every turn and does nothing else: no model, no JSON
 * parsing beyond spotting the end message, one read and one write a turn.
 * Whatever time a match with it takes is the referee's own overhead.
 *
 * Build: cc -O2 -o minimal_c minimal.c
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True if the line's "type" is "end"; tolerant of spacing around the colon. */
static int is_end(const char *line) {
    const char *p = strstr(line, "\"type\"");
    if (!p) return 0;
    p += 6;
    while (isspace((unsigned char)*p)) p++;
    if (*p++ != ':') return 0;
    while (isspace((unsigned char)*p)) p++;
    return strncmp(p, "\"end\"", 5) == 0;
}

int main(void) {
    static const char reply[] = "{\"real_move\":\"rock\"}\n";
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) return 0; /* hello */
    fputs("{\"name\":\"minimal-c\"}\n", stdout);
    fflush(stdout);
    while (getline(&line, &cap, stdin) >= 0) {
        if (is_end(line)) break;
        if (line[0] == '\n') continue;
        fwrite(reply, 1, sizeof reply - 1, stdout);
        fflush(stdout);
    }
    free(line);
    return 0;
}
