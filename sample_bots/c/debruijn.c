/* debruijn-c: plays a de Bruijn sequence of the game's moves, over and over.
 *
 * A de Bruijn sequence of order k contains every run of k moves exactly once
 * (order 4 for three moves: 81 throws; order 3 for five: 125 throws), so every
 * move and every short run of moves is equally frequent: counting learns
 * nothing, and a context model needs contexts of length k to see the order.
 * History matching finds it after one period. The start is seed-chosen.
 *
 * Protocol: one JSON object per line on stdin/stdout (protocol/README.md); the
 * few fields needed are found by key, tolerant of spacing; getline() reads
 * lines of any length.
 *
 * Build: cc -O2 -o debruijn_c debruijn.c
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

#define MAXSEQ 4096

static int seq[MAXSEQ];
static int seqlen;
static int work[16];

/* The FKM construction: concatenate the Lyndon words whose length divides k. */
static void lyndon(int t, int p, int k, int n) {
    if (seqlen >= MAXSEQ) return;
    if (t > k) {
        if (k % p == 0)
            for (int j = 1; j <= p && seqlen < MAXSEQ; j++) seq[seqlen++] = work[j];
        return;
    }
    work[t] = work[t - p];
    lyndon(t + 1, p, k, n);
    for (int j = work[t - p] + 1; j < n; j++) {
        work[t] = j;
        lyndon(t + 1, t, k, n);
    }
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) return 0;
    const char *seed = find_value(line, "seed");
    setup_moves(line);
    int order = nmoves <= 3 ? 4 : 3;
    work[0] = 0;
    lyndon(1, 1, order, nmoves);
    if (seqlen == 0) seq[seqlen++] = 0;
    unsigned long long start = seed ? strtoull(seed, NULL, 10) % (unsigned long long)seqlen : 0;
    fputs("{\"name\": \"debruijn-c\", \"version\": \"1\"}\n", stdout);
    fflush(stdout);
    while (getline(&line, &cap, stdin) >= 0) {
        char type[NAMELEN] = "";
        if (!read_string(find_value(line, "type"), type, sizeof type)) continue;
        if (strcmp(type, "end") == 0) break;
        if (strcmp(type, "turn") != 0) continue;
        const char *r = find_value(line, "round");
        long round = r ? strtol(r, NULL, 10) : 1;
        unsigned long long i = start + (unsigned long long)(round > 0 ? round - 1 : 0);
        printf("{\"round\": %ld, \"real_move\": \"%s\"}\n", round, moves[seq[i % seqlen]]);
        fflush(stdout);
    }
    free(line);
    return 0;
}
