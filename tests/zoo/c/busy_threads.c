/* Zoo (C): from round 3 on, 8 threads of the bot's one process spin for the rest of
 * the match, while it answers every move at once. Only threads: a watchdog that
 * counts processes sees one, busy.
 * Expected verdict: cpu_share -> disqualified wherever the opponent is slowed; never
 * a fault of the opponent's.
 */
#include <pthread.h>

#include "zoo.h"

#define THREADS 8

static void *spin(void *arg) {
    volatile unsigned long n = 0;
    (void)arg;
    for (;;) n++;
    return NULL;
}

static int bad(int round) {
    (void)round;
    for (int i = 0; i < THREADS; i++) {
        pthread_t t;
        pthread_create(&t, NULL, spin, NULL);
    }
    return 0;
}

int main(void) {
    zoo_play("c_busy_threads", bad);
    return 0;
}
