"""Zoo: a well-behaved bot that forks a child every round: the child works out the
move and hands it back through a pipe, the parent waits for it and answers. It does
not catch a refused fork: where its fork is refused (EAGAIN), it dies of it.

Expected verdict: ok, alone or beside any bot whose processes are not counted
with its own.
"""

import os

import zoolib

zoolib.handshake("fork_each_round")
for r in zoolib.turns():
    reply_r, reply_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(reply_w, b"rock")
        os._exit(0)
    os.close(reply_w)
    move = os.read(reply_r, 16).decode()
    os.close(reply_r)
    os.waitpid(child, 0)
    zoolib.move(r, move)
