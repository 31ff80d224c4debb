"""Zoo: at round 3 it leaves files and directories the teardown must still remove: a
directory of mode 0 holding a file, a read-only directory holding a mode-0 file, a
symbolic link to /etc and one to the referee's side of the file system, a FIFO,
and a directory that is itself a link target loop. Then it plays on.

Expected verdict: ok in every layer; the scratch directory is gone after the match
and nothing the links point to is touched.
"""

import os

import zoolib


def bad(round_: int) -> bool:
    zoolib.log(f"scratch: {os.getcwd()}")
    os.makedirs("closed/inner", exist_ok=True)
    with open("closed/inner/f", "w") as f:
        f.write("x")
    os.chmod("closed/inner", 0)
    os.chmod("closed", 0)
    os.makedirs("readonly", exist_ok=True)
    fd = os.open("readonly/mode0", os.O_CREAT | os.O_WRONLY, 0)
    os.close(fd)
    os.chmod("readonly", 0o500)
    os.symlink("/etc", "etc-link")
    os.symlink("/", "root-link")
    os.symlink("loop", "loop")
    os.mkfifo("fifo")
    os.chmod(".", 0o500)  # its own scratch directory, read-only
    zoolib.log("hostile_modes: left")
    return False


zoolib.play("hostile_modes", bad)
