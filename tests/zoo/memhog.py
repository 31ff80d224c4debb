"""Zoo: memory hog. At round 3 it fills memory 64 MiB at a time (up to 6 GiB),
touching every page so it really is resident, and never answers.

Expected verdict: memory_limit -> disqualified (the RSS watchdog; the zoo sets 256 MiB).
"""

import zoolib

hoard = []


def bad(round_: int) -> bool:
    for _ in range(96):
        hoard.append(b"\x01" * (64 << 20))
    zoolib.log(f"memhog: holding {len(hoard) * 64} MiB")
    zoolib.sleep_forever()
    return True


zoolib.play("memhog", bad)
