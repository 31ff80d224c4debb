/* cycler-c: plays the game's moves in order, starting at a seed-chosen move.
 *
 * Every move is equally frequent, so frequency counting learns nothing, while
 * sequence models (Markov, history matching) lock on quickly: a clean test of
 * whether an opponent models order as well as counts.
 *
 * Protocol: one JSON object per line on stdin/stdout (protocol/README.md); the
 * few fields needed are found by key, tolerant of spacing; getline() reads
 * lines of any length.
 *
 * Build: cc -O2 -o cycler_c cycler.c
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
    unsigned long long start = seed ? strtoull(seed, NULL, 10) % (unsigned long long)nmoves : 0;
    fputs("{\"name\": \"cycler-c\", \"version\": \"1\"}\n", stdout);
    fflush(stdout);
    while (getline(&line, &cap, stdin) >= 0) {
        char type[NAMELEN] = "";
        if (!read_string(find_value(line, "type"), type, sizeof type)) continue;
        if (strcmp(type, "end") == 0) break;
        if (strcmp(type, "turn") != 0) continue;
        const char *r = find_value(line, "round");
        long round = r ? strtol(r, NULL, 10) : 1;
        int m = (int)((start + (unsigned long long)(round > 0 ? round - 1 : 0)) % nmoves);
        printf("{\"round\": %ld, \"real_move\": \"%s\"}\n", round, moves[m]);
        fflush(stdout);
    }
    free(line);
    return 0;
}
