/* Zoo (C): at round 3 it reaches for the kernel surface that no bot needs, each
 * call in a harmless form, and reports on stderr "<probe>: blocked" when the call
 * was refused (EPERM; ENOSYS for clone3, as the filter answers it) and
 * "<probe>: allowed (<what happened>)" otherwise; then it plays on.
 *
 * - userns: unshare(CLONE_NEWUSER | CLONE_NEWNET), and if that works, acting as
 *   CAP_NET_ADMIN of the new namespace: an nf_tables table over a netfilter netlink
 *   socket ("nftables: allowed (table created)");
 * - clone3-userns: clone3 with CLONE_NEWUSER (flags in memory, out of a filter's reach);
 * - netlink-netfilter: a netfilter netlink socket in its own namespace;
 * - modify_ldt (read the LDT), personality (ADDR_NO_RANDOMIZE; restored), vsock
 *   (socket(AF_VSOCK)), memfd_secret, io_setup, io_uring, pidfd_getfd (its own
 *   stdin), kcmp (its own stdin against itself), keyctl (its session keyring id).
 *
 * Expected verdict: ok; every probe blocked in every layer with a seccomp filter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netlink.h>

#include "zoo.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef NETLINK_NETFILTER
#define NETLINK_NETFILTER 12
#endif

static void report(const char *probe, long result) {
    int err = errno;
    if (result >= 0)
        fprintf(stderr, "%s: allowed (succeeded)\n", probe);
    else if (err == EPERM || (err == ENOSYS && strcmp(probe, "clone3-userns") == 0))
        fprintf(stderr, "%s: blocked\n", probe);
    else
        fprintf(stderr, "%s: allowed (%s)\n", probe, strerrorname_np(err));
    fflush(stderr);
}

/* One netlink message: header, nfgenmsg, and an optional string attribute. */
static size_t nf_message(char *at, uint16_t type, uint16_t flags, uint8_t family,
                         uint16_t res_id, uint32_t seq, const char *name) {
    struct nlmsghdr *h = (struct nlmsghdr *)at;
    size_t len = NLMSG_HDRLEN + 4; /* struct nfgenmsg: family, version, res_id */
    memset(at, 0, 64);
    h->nlmsg_type = type;
    h->nlmsg_flags = NLM_F_REQUEST | flags;
    h->nlmsg_seq = seq;
    at[NLMSG_HDRLEN] = (char)family;
    at[NLMSG_HDRLEN + 1] = 0; /* NFNETLINK_V0 */
    uint16_t id = htons(res_id);
    memcpy(at + NLMSG_HDRLEN + 2, &id, 2);
    if (name) {
        struct nlattr *a = (struct nlattr *)(at + len);
        a->nla_type = 1; /* NFTA_TABLE_NAME */
        a->nla_len = (uint16_t)(NLA_HDRLEN + strlen(name) + 1);
        memcpy((char *)a + NLA_HDRLEN, name, strlen(name) + 1);
        len += NLA_ALIGN(a->nla_len);
    }
    h->nlmsg_len = (uint32_t)len;
    return NLMSG_ALIGN(len);
}

/* As root of a user namespace of its own: create an nf_tables table. */
static void nftables_table(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
    if (fd < 0) {
        report("nftables", -1);
        return;
    }
    char buf[256];
    size_t n = 0;
    n += nf_message(buf + n, 0x10, 0, 0, 10, 1, NULL);          /* NFNL_MSG_BATCH_BEGIN */
    n += nf_message(buf + n, (10 << 8) | 0, NLM_F_CREATE | NLM_F_ACK, 2, 0, 2, "zoo");
    n += nf_message(buf + n, 0x11, 0, 0, 10, 3, NULL);          /* NFNL_MSG_BATCH_END */
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, buf, n, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        report("nftables", -1);
        close(fd);
        return;
    }
    char reply[4096];
    ssize_t got = recv(fd, reply, sizeof reply, 0);
    close(fd);
    if (got < (ssize_t)NLMSG_HDRLEN) {
        report("nftables", -1);
        return;
    }
    struct nlmsghdr *h = (struct nlmsghdr *)reply;
    int error = h->nlmsg_type == NLMSG_ERROR ? ((struct nlmsgerr *)NLMSG_DATA(h))->error : 0;
    if (error == 0)
        fprintf(stderr, "nftables: allowed (table created)\n");
    else
        fprintf(stderr, "nftables: refused by the kernel (%s)\n", strerrorname_np(-error));
    fflush(stderr);
}

static void userns(void) {
    /* In a child, so that the bot itself keeps its namespaces. */
    pid_t child = fork();
    if (child == 0) {
        long r = unshare(CLONE_NEWUSER | CLONE_NEWNET);
        report("userns", r);
        if (r == 0) nftables_table();
        _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
}

static void clone3_userns(void) {
    uint64_t args[11] = {0}; /* struct clone_args, CLONE_ARGS_SIZE_VER2 */
    args[0] = CLONE_NEWUSER;
    args[4] = SIGCHLD; /* exit_signal */
    long r = syscall(SYS_clone3, args, sizeof args);
    if (r == 0) _exit(0);
    report("clone3-userns", r);
    if (r > 0) waitpid((pid_t)r, NULL, 0);
}

static int bad(int round) {
    (void)round;
    userns();
    clone3_userns();
    long r = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
    report("netlink-netfilter", r);
    if (r >= 0) close((int)r);
    char ldt[16];
    report("modify_ldt", syscall(SYS_modify_ldt, 0, ldt, sizeof ldt));
    int persona = personality(0xffffffff);
    r = personality((unsigned long)persona | ADDR_NO_RANDOMIZE);
    report("personality", r);
    if (r >= 0) personality((unsigned long)persona);
    r = socket(AF_VSOCK, SOCK_STREAM, 0);
    report("vsock", r);
    if (r >= 0) close((int)r);
    r = syscall(SYS_memfd_secret, 0);
    report("memfd_secret", r);
    if (r >= 0) close((int)r);
    unsigned long aio = 0;
    r = syscall(SYS_io_setup, 1, &aio);
    report("io_setup", r);
    if (r == 0) syscall(SYS_io_destroy, aio);
    char params[120] = {0}; /* struct io_uring_params */
    r = syscall(SYS_io_uring_setup, 1, params);
    report("io_uring", r);
    if (r >= 0) close((int)r);
    long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
    r = pidfd < 0 ? pidfd : syscall(SYS_pidfd_getfd, pidfd, 0, 0);
    report("pidfd_getfd", r);
    if (r >= 0) close((int)r);
    if (pidfd >= 0) close((int)pidfd);
    report("kcmp", syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, 0, 0));
    report("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* session */, 0));
    return 0;
}

int main(void) {
    zoo_play("kernel_surface", bad);
    return 0;
}
