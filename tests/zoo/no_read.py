"""Zoo: never reads stdin again after round 2 (and never answers).

Expected verdict: timeout at rounds 3, 4, 5 -> disqualified (too_many_faults).
"""

import zoolib

zoolib.handshake("no_read")
for r in zoolib.turns():
    zoolib.move(r)
    if r == zoolib.BAD_ROUND - 1:
        zoolib.sleep_forever()
