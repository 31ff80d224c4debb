/* Zoo (C): an escapee that drops its bot marker. At round 3 it double-forks a
 * grandchild that calls setsid(), lets go of the referee's pipes and re-executes
 * itself with an empty environment (no REFEREE_BOT_MARKER) to sleep; the bot waits
 * for that exec, plays on and exits at the end, leaving it behind.
 * Expected verdict: the escape is charged to this bot where its cgroup or its own
 * uid says whose the process is, and never to its opponent.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zoo.h"

static char *self;

static int bad(int round) {
    (void)round;
    /* Closed in the grandchild by its exec: EOF here means the marker is gone. */
    int gone[2];
    if (pipe2(gone, O_CLOEXEC) != 0) return 0;
    if (fork() == 0) {
        if (fork() == 0) {
            setsid();
            int devnull = open("/dev/null", O_RDWR);
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
            char *argv[] = {self, "--sleep", NULL};
            char *envp[] = {NULL};
            execve(self, argv, envp);
            _exit(1);
        }
        _exit(0);
    }
    close(gone[1]);
    wait(NULL);
    char c;
    while (read(gone[0], &c, 1) > 0) {
    }
    close(gone[0]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--sleep") == 0)
        for (;;) pause();
    self = argv[0];
    zoo_play("c_framing_escapee", bad);
    return 0;
}
