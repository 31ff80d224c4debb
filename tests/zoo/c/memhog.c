/* Zoo (C): memory hog without NULL checks. At round 3 it mallocs and touches 64 MiB
 * blocks up to 6 GiB and never answers. Under a tight RLIMIT_AS this would be a
 * SIGSEGV; with the referee's large address-space backstop the RSS watchdog fires first.
 * Expected verdict: memory_limit -> disqualified.
 */
#include <unistd.h>

#include "zoo.h"

/* Kept reachable so the compiler cannot drop the allocations as dead stores. */
static char *volatile hoard[96];

static int bad(int round) {
    (void)round;
    size_t block = 64u << 20;
    for (int i = 0; i < 96; i++) {
        hoard[i] = malloc(block);
        memset(hoard[i], 1, block); /* no NULL check on purpose */
    }
    for (;;) pause();
    return 1;
}

int main(void) {
    zoo_play("c_memhog", bad);
    return 0;
}
