/* Zoo (C): abort() at round 3. As pid 1 of a PID namespace (unshare layer) the
 * self-sent SIGABRT is ignored and glibc ends with a faulting instruction instead.
 * Expected verdict: crash at round 3 (SIGABRT, or SIGSEGV as pid 1) -> disqualified.
 */
#include "zoo.h"

static int bad(int round) {
    (void)round;
    abort();
}

int main(void) {
    zoo_play("c_abort", bad);
    return 0;
}
