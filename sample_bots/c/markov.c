/* markov-c: a first-order Markov model of the opponent's visible moves.
 *
 * It counts which move the opponent showed after each move it showed, predicts
 * the likeliest successor of its last visible move and plays a move that beats
 * it (of the two that do in RPSLS, the one scoring better against the whole
 * row of counts). Rows are halved when they grow large, so old habits fade.
 * Works for any game whose moves are among rock, paper, scissors, lizard, spock
 * (Chaos League and classic RoShamBo).
 *
 * Protocol: one JSON object per line on stdin/stdout (protocol/README.md). No
 * JSON library: the few fields needed are found by key, tolerant of spacing;
 * getline() reads lines of any length.
 *
 * Build: cc -O2 -o markov_c markov.c
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXMOVES 16
#define NAMELEN 32

static const char *ALL[5] = {"rock", "paper", "scissors", "lizard", "spock"};
/* DEFEATS5[i][j]: ALL[i] beats ALL[j]. */
static const int DEFEATS5[5][5] = {
    {0, 0, 1, 1, 0}, /* rock: scissors, lizard */
    {1, 0, 0, 0, 1}, /* paper: rock, spock */
    {0, 1, 0, 1, 0}, /* scissors: paper, lizard */
    {0, 1, 0, 0, 1}, /* lizard: paper, spock */
    {1, 0, 1, 0, 0}, /* spock: scissors, rock */
};

static char moves[MAXMOVES][NAMELEN];
static int nmoves;
static int beats[MAXMOVES][MAXMOVES]; /* beats[a][b]: moves[a] defeats moves[b] */
static uint64_t rng_state;

static uint64_t next_random(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

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

/* Copy a JSON string value (no escapes needed for our fields); 0 if not a string. */
static int read_string(const char *v, char *out, size_t cap) {
    if (!v || *v != '"') return 0;
    size_t i = 0;
    for (v++; *v && *v != '"' && i + 1 < cap; v++) out[i++] = *v;
    out[i] = '\0';
    return *v == '"';
}

static int move_index(const char *name) {
    for (int i = 0; i < nmoves; i++)
        if (strcmp(moves[i], name) == 0) return i;
    return -1;
}

static void setup_moves(const char *hello) {
    nmoves = 0;
    const char *v = find_value(hello, "moves");
    if (v && *v == '[') {
        v++;
        while (nmoves < MAXMOVES) {
            while (isspace((unsigned char)*v) || *v == ',') v++;
            if (*v != '"') break;
            if (!read_string(v, moves[nmoves], NAMELEN)) break;
            nmoves++;
            v = strchr(v + 1, '"') + 1;
        }
    }
    if (nmoves == 0) { /* no usable list: assume the game from its name */
        char game[NAMELEN] = "";
        read_string(find_value(hello, "game"), game, sizeof game);
        nmoves = strcmp(game, "roshambo") == 0 ? 3 : 5;
        for (int i = 0; i < nmoves; i++) strcpy(moves[i], ALL[i]);
    }
    for (int a = 0; a < nmoves; a++)
        for (int b = 0; b < nmoves; b++) {
            int ia = -1, ib = -1;
            for (int k = 0; k < 5; k++) {
                if (strcmp(moves[a], ALL[k]) == 0) ia = k;
                if (strcmp(moves[b], ALL[k]) == 0) ib = k;
            }
            beats[a][b] = ia >= 0 && ib >= 0 && DEFEATS5[ia][ib];
        }
}

static int pay(int a, int b) { return beats[a][b] ? 1 : (beats[b][a] ? -1 : 0); }

static unsigned counts[MAXMOVES][MAXMOVES];

static int choose(int last) {
    if (last < 0) return (int)(next_random() % (uint64_t)nmoves);
    unsigned *row = counts[last];
    unsigned top = 0;
    for (int i = 0; i < nmoves; i++)
        if (row[i] > top) top = row[i];
    if (top == 0) return (int)(next_random() % (uint64_t)nmoves);
    int ties[MAXMOVES], nt = 0;
    for (int i = 0; i < nmoves; i++)
        if (row[i] == top) ties[nt++] = i;
    int predicted = ties[next_random() % (uint64_t)nt];
    /* Among the moves that beat the prediction, the best against the whole row. */
    long best_ev = 0;
    int best[MAXMOVES], nb = 0;
    for (int a = 0; a < nmoves; a++) {
        if (!beats[a][predicted]) continue;
        long ev = 0;
        for (int b = 0; b < nmoves; b++) ev += (long)pay(a, b) * row[b];
        if (nb == 0 || ev > best_ev) {
            best_ev = ev;
            nb = 0;
        }
        if (ev == best_ev) best[nb++] = a;
    }
    if (nb == 0) return (int)(next_random() % (uint64_t)nmoves);
    return best[next_random() % (uint64_t)nb];
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) return 0;
    const char *seed = find_value(line, "seed");
    rng_state = seed ? strtoull(seed, NULL, 10) : 1;
    setup_moves(line);
    fputs("{\"name\": \"markov-c\", \"version\": \"1\"}\n", stdout);
    fflush(stdout);

    int prev = -1; /* the opponent's visible move before the last one */
    while (getline(&line, &cap, stdin) >= 0) {
        char type[NAMELEN] = "";
        if (!read_string(find_value(line, "type"), type, sizeof type)) continue;
        if (strcmp(type, "end") == 0) break;
        if (strcmp(type, "turn") != 0) continue;
        const char *r = find_value(line, "round");
        long round = r ? strtol(r, NULL, 10) : 0;
        char seen_name[NAMELEN] = "";
        int seen = -1;
        if (read_string(find_value(line, "opponent_last_visible"), seen_name, sizeof seen_name))
            seen = move_index(seen_name);
        if (prev >= 0 && seen >= 0) {
            unsigned *row = counts[prev];
            if (++row[seen] > 400) /* fade old habits */
                for (int i = 0; i < nmoves; i++) row[i] /= 2;
        }
        prev = seen;
        int m = choose(seen);
        printf("{\"round\": %ld, \"real_move\": \"%s\"}\n", round, moves[m]);
        fflush(stdout);
    }
    free(line);
    return 0;
}
