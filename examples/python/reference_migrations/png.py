"""Just enough PNG for UnCloudNotes' images: an encoder for small grayscale images and a reader
for the size in the IHDR chunk (all the v3 → v4 policy needs)."""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode(width: int, height: int, shade: int = 0) -> bytes:
    """A valid 8-bit grayscale PNG of width × height pixels (a diagonal gradient shifted by shade)."""
    raw = bytearray()
    for y in range(height):
        raw.append(0)  # filter type None
        raw.extend((x + y + shade) & 0xFF for x in range(width))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(bytes(raw))) + _chunk(b"IEND", b"")


def size(data: bytes | None) -> tuple[int, int] | None:
    """(width, height) from the IHDR chunk, or None when the bytes are not a PNG."""
    if data is None or len(data) < 24 or data[:8] != SIGNATURE or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])
