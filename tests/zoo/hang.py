"""Zoo: hang. At round 3 it stops answering and sleeps forever.

Expected verdict: timeout at rounds 3, 4, 5 -> disqualified (too_many_faults).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.sleep_forever()
    return True


zoolib.play("hang", bad)
