"""Zoo: fills /dev/shm at round 3 (tmpfs pages are not in any process's RSS).

Writes 200 MiB as four 50 MiB files (each under RLIMIT_FSIZE) to /dev/shm, reports on
stderr "shm: blocked after N MiB (<error>)" or "shm: wrote 200 MiB", deletes the files
(to spare the test machine) and keeps playing.
Expected verdict: ok. Under bwrap /dev/shm is a tmpfs of Limits.tmpfs_mib (64), so
"blocked"; under Landlock it is not writable at all; basic and unshare without Landlock
let it through (a known gap: only a cgroup memory limit would count these pages).
"""

import os

import zoolib


def bad(round_: int) -> bool:
    paths = [f"/dev/shm/referee-zoo-{os.getpid()}-{i}" for i in range(4)]
    chunk = b"\x02" * (1 << 20)
    written = 0
    try:
        for path in paths:
            with open(path, "wb") as f:
                for _ in range(50):
                    f.write(chunk)
                    f.flush()
                    written += 1
        zoolib.log(f"shm: wrote {written} MiB")
    except OSError as exc:
        zoolib.log(f"shm: blocked after {written} MiB ({exc.strerror})")
    finally:
        for path in paths:
            try:
                os.unlink(path)
            except OSError:
                pass
    return False


zoolib.play("shm_hog", bad)
