/* Zoo (C): writes through a NULL pointer at round 3.
 * Expected verdict: crash at round 3 (SIGSEGV; exit status 139 under bwrap) -> disqualified.
 */
#include "zoo.h"

static int bad(int round) {
    (void)round;
    volatile int *p = NULL;
    *p = 42;
    return 1;
}

int main(void) {
    zoo_play("c_segv", bad);
    return 0;
}
