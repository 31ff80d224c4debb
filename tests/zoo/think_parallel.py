"""Zoo: a well-behaved bot that thinks in 4 processes: on every move each of them
computes for 2 ms of CPU, and it answers once all have; between its moves they
all wait (the honest counterpart of cpu_hog.py).

Expected verdict: ok (never cpu_share: it computes only while it owes a move).
"""

import os
import time

import zoolib

WORKERS = 4


def think(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def worker(orders: int, done: int) -> None:
    while os.read(orders, 1):
        think(0.002)
        os.write(done, b".")
    os._exit(0)


pipes = []
for _ in range(WORKERS):
    orders_r, orders_w = os.pipe()
    done_r, done_w = os.pipe()
    if os.fork() == 0:
        worker(orders_r, done_w)
    pipes.append((orders_w, done_r))

zoolib.handshake("think_parallel")
for r in zoolib.turns():
    for orders, _ in pipes:
        os.write(orders, b".")
    for _, done in pipes:
        os.read(done, 1)
    zoolib.move(r)
