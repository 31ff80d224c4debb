/* Shared plumbing for the C zoo bots: the normal protocol up to the bad round.
 *
 * zoo_play(name, bad) answers hello, plays "rock" every round and calls bad(round)
 * at ZOO_BAD_ROUND; bad returns nonzero when it has answered the round itself.
 * Lines from the referee are short (a turn is under 200 bytes), so a fixed buffer
 * is enough; a longer line is read in pieces and its round parsed from the first.
 */
#ifndef ZOO_H
#define ZOO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZOO_BAD_ROUND 3

static int zoo_round_of(const char *line) {
    const char *p = strstr(line, "\"round\":");
    return p ? atoi(p + 8) : -1;
}

static void zoo_move(int round) {
    printf("{\"round\": %d, \"real_move\": \"rock\"}\n", round);
    fflush(stdout);
}

static void zoo_play(const char *name, int (*bad)(int)) {
    char line[4096];
    if (!fgets(line, sizeof line, stdin)) exit(0);
    printf("{\"name\": \"%s\"}\n", name);
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        if (!strstr(line, "\"turn\"")) break; /* "end" (or anything else): stop */
        int round = zoo_round_of(line);
        if (round == ZOO_BAD_ROUND && bad && bad(round)) continue;
        zoo_move(round);
    }
}

#endif
