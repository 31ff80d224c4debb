"""Zoo: a well-behaved bot that computes for 5 ms of CPU on every move (the
opponent of the CPU-share test)."""

import time

import zoolib


def think(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


zoolib.handshake("think5ms")
for r in zoolib.turns():
    think(0.005)
    zoolib.move(r)
