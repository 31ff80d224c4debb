"""Zoo: the well-behaved opponent. Plays "rock" every round.

Expected verdict: ok.
"""

import zoolib

zoolib.play("rock")
