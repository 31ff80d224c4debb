/* rotator-c: plays the opponent's last visible move shifted by a fixed step.
 *
 * The step (1 to n-1 places along the game's move list) is chosen from the seed
 * and kept for the match: in RoShamBo a step of 1 beats the last move and 2
 * loses to it. One of the "rotation" bots of the classic competitions: purely
 * reactive, so it is beaten every round by anything that models its reply to
 * what it was shown, and a shadow steers it exactly.
 *
 * Protocol: one JSON object per line on stdin/stdout (protocol/README.md); the
 * few fields needed are found by key, tolerant of spacing; getline() reads
 * lines of any length. An opponent_last_visible of null (round 1, a fault) is
 * answered with the first move.
 *
 * Build: cc -O2 -o rotator_c rotator.c
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXMOVES 16
#define NAMELEN 32

static char moves[MAXMOVES][NAMELEN];
static int nmoves;

/* The value of "key" in a JSON object line (first char after the colon), or NULL. */
static const char *find_value(const char *line, const char *key) {
    size_t klen = strlen(key);
    for (const char *p = strchr(line, '"'); p; p = strchr(p + 1, '"')) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '"') {
            const char *q = p + 2 + klen;
            while (isspace((unsigned char)*q)) q++;
            if (*q != ':') continue;
            q++;
            while (isspace((unsigned char)*q)) q++;
            return q;
        }
    }
    return NULL;
}

static int read_string(const char *v, char *out, size_t cap) {
    if (!v || *v != '"') return 0;
    size_t i = 0;
    for (v++; *v && *v != '"' && i + 1 < cap; v++) out[i++] = *v;
    out[i] = '\0';
    return *v == '"';
}

static void setup_moves(const char *hello) {
    static const char *ALL[5] = {"rock", "paper", "scissors", "lizard", "spock"};
    const char *v = find_value(hello, "moves");
    nmoves = 0;
    if (v && *v == '[') {
        v++;
        while (nmoves < MAXMOVES) {
            while (isspace((unsigned char)*v) || *v == ',') v++;
            if (*v != '"' || !read_string(v, moves[nmoves], NAMELEN)) break;
            nmoves++;
            v = strchr(v + 1, '"') + 1;
        }
    }
    if (nmoves == 0) {
        char game[NAMELEN] = "";
        read_string(find_value(hello, "game"), game, sizeof game);
        nmoves = strcmp(game, "roshambo") == 0 ? 3 : 5;
        for (int i = 0; i < nmoves; i++) strcpy(moves[i], ALL[i]);
    }
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) return 0;
    const char *seed = find_value(line, "seed");
    setup_moves(line);
    int step = 1;
    if (nmoves > 1 && seed) step = 1 + (int)(strtoull(seed, NULL, 10) % (unsigned long long)(nmoves - 1));
    fputs("{\"name\": \"rotator-c\", \"version\": \"1\"}\n", stdout);
    fflush(stdout);
    while (getline(&line, &cap, stdin) >= 0) {
        char type[NAMELEN] = "";
        if (!read_string(find_value(line, "type"), type, sizeof type)) continue;
        if (strcmp(type, "end") == 0) break;
        if (strcmp(type, "turn") != 0) continue;
        const char *r = find_value(line, "round");
        long round = r ? strtol(r, NULL, 10) : 1;
        char seen[NAMELEN] = "";
        int m = 0;
        if (read_string(find_value(line, "opponent_last_visible"), seen, sizeof seen)) {
            for (int i = 0; i < nmoves; i++)
                if (strcmp(seen, moves[i]) == 0) m = (i + step) % nmoves;
        }
        printf("{\"round\": %ld, \"real_move\": \"%s\"}\n", round, moves[m]);
        fflush(stdout);
    }
    free(line);
    return 0;
}
