"""Hash slots in pure Python, as the cluster specification defines them: CRC16/XMODEM of the key (or of
its hash tag) modulo 16384, so a lesson can show slots where no cluster runs."""

from __future__ import annotations

SLOTS = 16384


def _crc16_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _attempt in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_TABLE = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster uses."""
    crc = 0
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def hash_tag(key: str | bytes) -> bytes:
    """The part of ``key`` that is hashed: the text between the first ``{`` and the next ``}``, if
    that text is not empty; otherwise the whole key."""
    k = key.encode() if isinstance(key, str) else bytes(key)
    start = k.find(b"{")
    if start != -1:
        end = k.find(b"}", start + 1)
        if end > start + 1:
            return k[start + 1 : end]
    return k


def key_slot(key: str | bytes) -> int:
    """The hash slot of ``key`` (what ``CLUSTER KEYSLOT key`` answers): CRC16(tag or key) mod 16384."""
    return crc16(hash_tag(key)) % SLOTS


def same_slot(*keys: str | bytes) -> bool:
    """True if all ``keys`` hash to one slot (a multi-key command or a script on them is allowed)."""
    return len({key_slot(k) for k in keys}) <= 1


def default_primary(slot: int, primaries: int = 3) -> int:
    """Which primary (0, 1, 2, ...) holds ``slot`` when ``redis-cli --cluster create`` split the slots
    evenly, as it does: for three primaries 0-5460, 5461-10922, 10923-16383."""
    per = SLOTS / primaries
    for i in range(primaries):
        if slot <= round((i + 1) * per) - 1:
            return i
    return primaries - 1
