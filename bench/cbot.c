/*
 * cbot: the cheapest possible bot, so that a benchmark measures the referee.
 * Answers hello with {"name":"cbot"}, every turn with rock (echoing the round),
 * and exits on end or end of input. With an argument N it also asks for a shadow
 * every N rounds (so the referee keeps token history, as in a real match).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    static char line[1 << 16];
    long shadow_every = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    while (fgets(line, sizeof line, stdin)) {
        /* The referee writes compact JSON, so the type tag is found verbatim. */
        if (strncmp(line, "{\"type\":\"turn\"", 14) == 0) {
            const char *r = strstr(line, "\"round\":");
            long round = r ? strtol(r + 8, NULL, 10) : 0;
            if (shadow_every > 0 && round % shadow_every == 0)
                printf("{\"round\":%ld,\"real_move\":\"rock\",\"shadow_request\":true,"
                       "\"shadow_move\":\"paper\"}\n", round);
            else
                printf("{\"round\":%ld,\"real_move\":\"rock\"}\n", round);
        } else if (strstr(line, "\"type\":\"hello\"")) {
            fputs("{\"name\":\"cbot\"}\n", stdout);
        } else if (strstr(line, "\"type\":\"end\"")) {
            return 0;
        }
        /* Lock-step protocol: every reply must leave now, not when a buffer fills. */
        fflush(stdout);
    }
    return 0;
}
