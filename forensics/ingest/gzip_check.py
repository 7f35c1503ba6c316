"""Integrity of ``.gz`` inputs: Spark keeps the lines before damage; this says there was damage."""

from __future__ import annotations

import zlib

CHUNK = 1 << 20


def gzip_problem(path: str) -> str | None:
    """None for a sound gzip file (one or more members), else what is wrong with it."""
    decoder, in_member, offset = zlib.decompressobj(wbits=31), False, 0
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                offset += len(chunk)
                data = chunk if in_member else chunk.lstrip(b"\x00")
                while data:
                    in_member = True
                    decoder.decompress(data)
                    data = decoder.unused_data
                    if decoder.eof:  # a member ended; another may follow (concatenated gzip)
                        decoder, in_member = zlib.decompressobj(wbits=31), False
                        data = data.lstrip(b"\x00")
    except zlib.error as exc:
        return f"corrupt gzip data near byte {offset}: {exc}; the lines after the damage could not be read"
    except OSError as exc:
        return f"could not read: {exc.strerror or exc}"
    if in_member:
        return f"truncated gzip: the file ends mid-stream after {offset} bytes; its last lines are missing"
    return None
