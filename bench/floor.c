/*
 * floor: the smallest referee that does the same exchange as the real one, to
 * measure how fast two bots can physically be driven on this machine.
 *
 *   floor [-n ROUNDS] [-t MOVE_MS] [-s SPIN_US] [-S SLICE_NS] [-p] [-q] [-j] BOT1... -- BOT2...
 *
 * Per round, like referee/match.py: build a Chaos League turn line for each bot
 * (same fields, same byte sizes), write both before reading either, then read
 * both replies with poll() against a per-move deadline. Replies are checked just
 * enough to score the round (round echo and real_move), so the floor cannot go
 * faster by skipping the work every referee must do. Hello and end are sent too.
 *
 * With -s it first polls without sleeping for up to SPIN_US microseconds, with the
 * referee's spin policy: on a virtual machine a sleeping process can be woken tens
 * of microseconds after its data arrives, so a floor that only ever sleeps may be no
 * floor at all. With -p it places itself and the bots on CPUs as the referee's
 * --pin-cpus does (itself on the first allowed CPU, bot i on the (i+1)-th, wrapping
 * around). With -q it holds a zero CPU wake-up latency request on
 * /dev/cpu_dma_latency for its whole run, as the referee does by default
 * (referee/wakeup.py), so that idle CPUs poll instead of halting; it fails if the
 * request cannot be made, rather than measure something else. With -S the bots
 * ask for time slices of SLICE_NS nanoseconds (Linux 6.12+), as the referee's
 * bots do when the match has a single CPU. The benchmark runs it in each of these
 * ways and keeps the fastest.
 *
 * Prints one line: "rounds R wall_s W rounds_per_s X" (or JSON with -j). The wall
 * time runs from the first spawn to the last reap, the span the referee reports.
 *
 * Not a referee for real bots: a reply that misses its deadline counts as a fault,
 * but a late reply is then taken as the next round's (the benchmark's bots are
 * never late), and there is no containment, replay or stderr capture.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINE 65536

static const char *MOVES[5] = {"rock", "paper", "scissors", "lizard", "spock"};

struct bot {
    pid_t pid;
    int in_fd;  /* we write the bot's stdin */
    int out_fd; /* we read the bot's stdout */
    char buf[MAX_LINE + 1];
    size_t len;
    int last_real; /* -1: no move */
    int score;
    int faults;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char USAGE[] = "usage: floor [-n ROUNDS] [-t MOVE_MS] [-s SPIN_US] [-S SLICE_NS] "
                            "[-p] [-q] [-j] BOT1... -- BOT2...\n";

/* struct sched_attr, first version: a fair task's sched_runtime is its slice request. */
struct sched_attr_v0 {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

static unsigned long long slice_ns = 0; /* -S: the bots' slice request; 0: none */

static void die(const char *what) {
    perror(what);
    exit(2);
}

/* The CPUs this process may use, in order; their count. */
static int allowed_cpus(int *cpus, int max) {
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) < 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

static void pin_self(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set); /* speed only: a refusal is ignored */
}

/* The zero wake-up latency request: it holds while the descriptor stays open (the
   process's exit closes it). O_CLOEXEC keeps it from the bots. */
static void hold_idle_poll(void) {
    int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    int32_t zero = 0;
    if (fd < 0)
        die("/dev/cpu_dma_latency");
    if (write(fd, &zero, sizeof zero) != (ssize_t)sizeof zero)
        die("write /dev/cpu_dma_latency");
}

static void spawn(struct bot *b, char **argv) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        die("pipe2");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
#ifdef SYS_sched_setattr
        if (slice_ns) {
            struct sched_attr_v0 a = {.size = sizeof a, .runtime = slice_ns};
            if (syscall(SYS_sched_setattr, 0, &a, 0) != 0)
                die("sched_setattr");
        }
#endif
        execvp(argv[0], argv);
        perror(argv[0]);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    b->pid = pid;
    b->in_fd = in[1];
    b->out_fd = out[0];
    b->len = 0;
    b->last_real = -1;
    b->score = 0;
    b->faults = 0;
    /* Non-blocking reads: a reply is taken whole from the buffer, never waited on
       inside read(); the wait happens only in poll(), against the deadline. */
    fcntl(b->out_fd, F_SETFL, O_NONBLOCK);
}

static void write_all(struct bot *b, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(b->in_fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "floor: write to bot %d: %s\n", (int)b->pid, strerror(errno));
            exit(3);
        }
        s += w;
        n -= (size_t)w;
    }
}

/* Take one complete line out of b->buf into line (NUL-terminated); 1 if found. */
static int take_line(struct bot *b, char *line) {
    char *nl = memchr(b->buf, '\n', b->len);
    if (!nl)
        return 0;
    size_t n = (size_t)(nl - b->buf);
    memcpy(line, b->buf, n);
    line[n] = 0;
    b->len -= n + 1;
    memmove(b->buf, nl + 1, b->len);
    return 1;
}

/* Read the reply line of every bot in want[] (in place), until deadline.
   got[i] is set to 1 when bot i's line is in lines[i]. */
static void read_replies(struct bot *bots, int nb, char lines[][MAX_LINE + 1], int *got,
                         double deadline, double *spin_s, double spin_max) {
    struct pollfd pfd[2];
    int left = 0;
    double spin_end = *spin_s > 0 ? now_s() + *spin_s : 0;
    for (int i = 0; i < nb; i++) {
        got[i] = take_line(&bots[i], lines[i]);
        left += !got[i];
    }
    while (left > 0) {
        /* Try the read first: the bot has usually answered already, so the common
           path costs one read() and no poll(), as in the referee's fast path. */
        int k = 0, idx[2];
        for (int i = 0; i < nb; i++) {
            if (got[i])
                continue;
            struct bot *b = &bots[i];
            ssize_t r = read(b->out_fd, b->buf + b->len, MAX_LINE - b->len);
            if (r > 0) {
                b->len += (size_t)r;
                if (take_line(b, lines[i])) {
                    got[i] = 1;
                    left--;
                    continue;
                }
            } else if (r == 0) {
                fprintf(stderr, "floor: bot %d closed its stdout\n", i);
                exit(3);
            } else if (errno != EAGAIN && errno != EINTR) {
                die("read");
            }
            if (b->len >= MAX_LINE) {
                fprintf(stderr, "floor: bot %d line too long\n", i);
                exit(3);
            }
            pfd[k].fd = b->out_fd;
            pfd[k].events = POLLIN;
            idx[k++] = i;
        }
        if (left == 0)
            break;
        if (spin_end > 0) {
            /* Spin with poll(0), not with read(): a read of an empty pipe takes the
               pipe's lock, which the bot's write then has to wait for. */
            int ready = 0;
            while (!ready && now_s() < spin_end)
                ready = poll(pfd, (nfds_t)k, 0) > 0;
            if (ready)
                continue;
            spin_end = 0;
            /* The referee's policy: a spin that found nothing halves the budget
               (none after three), until the next reset every 256 rounds. */
            *spin_s = *spin_s > spin_max / 8 ? *spin_s / 2 : 0;
        }
        double wait = deadline - now_s();
        if (wait <= 0) {
            for (int j = 0; j < k; j++) {
                bots[idx[j]].faults++;
                got[idx[j]] = -1; /* timed out this round */
            }
            return;
        }
        int ms = (int)(wait * 1000.0) + 1;
        if (poll(pfd, (nfds_t)k, ms) < 0 && errno != EINTR)
            die("poll");
    }
}

static const char *bucket(int tokens) {
    if (tokens >= 40)
        return "HIGH";
    if (tokens >= 20)
        return "MEDIUM";
    if (tokens >= 1)
        return "LOW";
    return "EMPTY";
}

/* The JSON text of a move or null, as msgspec writes it. */
static const char *move_json(int m, char *tmp) {
    if (m < 0)
        return "null";
    snprintf(tmp, 16, "\"%s\"", MOVES[m]);
    return tmp;
}

/* Parse a reply just enough to score it: "round" must echo, "real_move" must be a move. */
static int parse_reply(const char *line, long round) {
    const char *r = strstr(line, "\"round\":");
    if (r && strtol(r + 8, NULL, 10) != round)
        return -1;
    const char *m = strstr(line, "\"real_move\":\"");
    if (!m)
        return -1;
    m += 13;
    for (int i = 0; i < 5; i++) {
        size_t n = strlen(MOVES[i]);
        if (strncmp(m, MOVES[i], n) == 0 && m[n] == '"')
            return i;
    }
    return -1;
}

static int payoff(int a, int b) {
    /* On the cycle rock, paper, scissors, spock, lizard each move beats the moves
       one and three places before it; ring[] maps the protocol's move order
       (lizard before spock) onto that cycle. A missing move (-1) loses. */
    static const int ring[5] = {0, 1, 2, 4, 3};
    if (a < 0 && b < 0)
        return -1;
    if (a < 0)
        return -1;
    if (b < 0)
        return 1;
    int d = (ring[b] - ring[a] + 5) % 5;
    if (d == 0)
        return 0;
    return (d == 2 || d == 4) ? 1 : -1;
}

int main(int argc, char **argv) {
    long rounds = 10000;
    double move_s = 1.0;
    double spin_s = 0;
    int pin = 0;
    int idle_poll = 0;
    int json = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            rounds = atol(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            move_s = atof(argv[++i]) / 1000.0;
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            spin_s = atof(argv[++i]) / 1e6;
        else if (strcmp(argv[i], "-S") == 0 && i + 1 < argc)
            slice_ns = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-p") == 0)
            pin = 1;
        else if (strcmp(argv[i], "-q") == 0)
            idle_poll = 1;
        else if (strcmp(argv[i], "-j") == 0)
            json = 1;
        else {
            fputs(USAGE, stderr);
            return 2;
        }
    }
    char **a1 = argv + i, **a2 = NULL;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = NULL;
            a2 = argv + i + 1;
            break;
        }
    }
    if (!a2 || !a1[0] || !a2[0] || rounds < 1) {
        fputs(USAGE, stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (idle_poll)
        hold_idle_poll();

    static struct bot bots[2];
    static char lines[2][MAX_LINE + 1];
    int got[2];
    char msg[2][512];
    int tokens[2] = {50, 50};

    int cpus[64];
    int ncpu = pin ? allowed_cpus(cpus, 64) : 0;
    double t0 = now_s();
    /* A child inherits the affinity it is forked with. */
    if (ncpu > 1)
        pin_self(cpus[1 % ncpu]);
    spawn(&bots[0], a1);
    if (ncpu > 1)
        pin_self(cpus[2 % ncpu]);
    spawn(&bots[1], a2);
    if (ncpu > 1)
        pin_self(cpus[0]);

    /* Hello, byte for byte the shape the referee sends. */
    for (int s = 0; s < 2; s++) {
        int n = snprintf(msg[s], sizeof msg[s],
                         "{\"type\":\"hello\",\"protocol\":1,\"game\":\"chaos\",\"params\":"
                         "{\"rounds\":%ld,\"tokens\":50,\"moves\":[\"rock\",\"paper\","
                         "\"scissors\",\"lizard\",\"spock\"]},\"seat\":%d,\"seats\":2,"
                         "\"seed\":%lld,\"time\":{\"handshake_ms\":10000,\"move_ms\":%d,"
                         "\"bank_ms\":3000}}\n",
                         rounds, s, 4611686018427387903LL - s, (int)(move_s * 1000));
        write_all(&bots[s], msg[s], (size_t)n);
    }
    double no_spin = 0;
    read_replies(bots, 2, lines, got, now_s() + 10.0, &no_spin, 0);
    for (int s = 0; s < 2; s++) {
        if (got[s] != 1 || !strstr(lines[s], "\"name\"")) {
            fprintf(stderr, "floor: bot %d failed the handshake\n", s);
            return 3;
        }
    }

    double t_play = now_s();
    char t1[16], t2[16];
    double spin = spin_s;
    for (long r = 1; r <= rounds; r++) {
        int len[2];
        if (r % 256 == 0)
            spin = spin_s;
        for (int s = 0; s < 2; s++) {
            struct bot *me = &bots[s], *opp = &bots[1 - s];
            len[s] = snprintf(msg[s], sizeof msg[s],
                              "{\"type\":\"turn\",\"round\":%ld,\"opponent_last_visible\":%s,"
                              "\"self_last_real\":%s,\"opponent_deception_bucket\":\"%s\"}\n",
                              r, move_json(opp->last_real, t1), move_json(me->last_real, t2),
                              bucket(tokens[1 - s]));
        }
        /* Both turns are written before either reply is read. */
        write_all(&bots[0], msg[0], (size_t)len[0]);
        write_all(&bots[1], msg[1], (size_t)len[1]);
        read_replies(bots, 2, lines, got, now_s() + move_s, &spin, spin_s);
        int mv[2];
        for (int s = 0; s < 2; s++) {
            mv[s] = got[s] == 1 ? parse_reply(lines[s], r) : -1;
            if (got[s] == 1 && mv[s] < 0)
                bots[s].faults++;
        }
        bots[0].score += payoff(mv[0], mv[1]);
        bots[1].score += payoff(mv[1], mv[0]);
        bots[0].last_real = mv[0];
        bots[1].last_real = mv[1];
    }
    double t_end_play = now_s();

    for (int s = 0; s < 2; s++) {
        int n = snprintf(msg[s], sizeof msg[s],
                         "{\"type\":\"end\",\"reason\":\"complete\",\"rounds\":%ld,"
                         "\"result\":null}\n",
                         rounds);
        write_all(&bots[s], msg[s], (size_t)n);
        close(bots[s].in_fd);
    }
    for (int s = 0; s < 2; s++) {
        int status;
        while (waitpid(bots[s].pid, &status, 0) < 0 && errno == EINTR)
            ;
        close(bots[s].out_fd);
    }
    double t1_end = now_s();
    double wall = t1_end - t0;
    double play = t_end_play - t_play;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    if (json)
        printf("{\"rounds\":%ld,\"wall_s\":%.6f,\"play_s\":%.6f,\"rounds_per_s\":%.1f,"
               "\"cpu_s\":%.6f,\"max_rss_kib\":%ld,\"scores\":[%d,%d],\"faults\":[%d,%d]}\n",
               rounds, wall, play, rounds / wall, cpu, ru.ru_maxrss, bots[0].score,
               bots[1].score, bots[0].faults, bots[1].faults);
    else
        printf("rounds %ld wall_s %.6f rounds_per_s %.1f cpu_s %.6f scores %d %d faults %d %d\n",
               rounds, wall, rounds / wall, cpu, bots[0].score, bots[1].score, bots[0].faults,
               bots[1].faults);
    return 0;
}
