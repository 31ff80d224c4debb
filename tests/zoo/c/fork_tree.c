/* Zoo (C): a setsid fork tree of 200 small sleeping processes at round 3, then it keeps
 * playing and exits at the end. Each process calls setsid(), so killpg cannot reach
 * them; C processes are small, so the RSS watchdog does not fire either.
 * Expected verdict: ok under a PID namespace (bwrap, unshare); escaped_process under
 * basic/landlock (the subreaper sweep finds the tree).
 */
#include <fcntl.h>
#include <unistd.h>

#include "zoo.h"

static int bad(int round) {
    (void)round;
    pid_t main_pid = getpid();
    int budget = 200;
    while (budget > 0) {
        int share = budget / 2;
        budget -= share + 1;
        if (fork() == 0) {
            setsid();
            int devnull = open("/dev/null", O_RDWR);
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
            budget = share;
        }
    }
    if (getpid() != main_pid)
        for (;;) pause();
    return 0;
}

int main(void) {
    zoo_play("c_fork_tree", bad);
    return 0;
}
