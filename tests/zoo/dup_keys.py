"""Zoo: answers round 3 with a duplicate key: {"real_move": "spock", "real_move": "rock"}.

The protocol follows msgspec: the last value wins, so this is a valid "rock".
Expected verdict: ok.
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.send_raw(b'{"round": 3, "real_move": "spock", "real_move": "rock"}\n')
    return True


zoolib.play("dup_keys", bad)
