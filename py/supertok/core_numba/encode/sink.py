"""Mirrors core_c/src/encode/sink.h: the encoder's output sink, the ids of a call and their
start offsets in the unit the caller asked for (bytes, code points or UTF-16 units), written up
to the caller's capacity and counted past it.

A sink is three arrays: ids (uint32), starts (uint64; length 0 for NULL) and its state o, an
int64 array of SINK_FIELDS: O_CAP, O_N, O_UNIT (ST_OFFSETS_*), O_POS, O_UNITS, O_LAST (for code
point and UTF-16 starts: text[0 .. pos) holds `units` units, and the last character that began
there began at unit offset `last`). The text s is the call's (padded) byte array.

sink.h's nmap/nbase (the encoder working on a normalized copy of text[nbase..), a HuggingFace
model's NFC: put maps a byte of the copy to nbase + nmap[byte] of the text) are here a step after
the stretch instead of a test in every put (put takes its text as an argument, and the kernels
pass the copy): the stretch is encoded into the sink in bytes of the copy (O_UNIT set to
ST_OFFSETS_BYTES), then map_starts puts each of its starts back in the text's offsets and the
caller's unit. A start in the copy is first moved to its character's start, which nmap maps to
the same place in the text as any byte of that character (NFC writes a character's bytes from
one source), so the starts are C's. O_COPY is 1 while the encoder works on such a copy (C: nmap
is not NULL): the span cache then remembers a span at once, never from the caller's buffer at the
call's end, when the copy is gone.
"""
import numpy as np
from numba import njit

ST_OFFSETS_BYTES, ST_OFFSETS_CODEPOINTS, ST_OFFSETS_UTF16 = 0, 1, 2
O_CAP, O_N, O_UNIT, O_POS, O_UNITS, O_LAST, O_STARTS, O_COPY = 0, 1, 2, 3, 4, 5, 6, 7
SINK_FIELDS = 8


def new_sink(cap, unit, with_starts):
    o = np.zeros(SINK_FIELDS, np.int64)
    o[O_CAP] = cap
    o[O_UNIT] = unit
    o[O_STARTS] = 1 if with_starts else 0
    return o


@njit(cache=True, nogil=True, _nrt=False)
def start_offset(o, s, b):
    """The offset of a token starting at byte b, in the sink's unit; a token that starts inside a
    character gets the offset of that character."""
    if o[O_UNIT] == ST_OFFSETS_BYTES:
        while b > 0 and (s[b] & 0xC0) == 0x80:
            b -= 1
        return b
    wide = 0xF0 if o[O_UNIT] == ST_OFFSETS_UTF16 else 0x100
    pos = o[O_POS]
    units = o[O_UNITS]
    last = o[O_LAST]
    while pos < b:
        c = s[pos]
        if (c & 0xC0) != 0x80:
            last = units
            units += 2 if c >= wide else 1
        pos += 1
    o[O_POS] = pos
    o[O_UNITS] = units
    o[O_LAST] = last
    return last if (s[b] & 0xC0) == 0x80 else units


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def put(o, ids, starts, s, tid, byte_start):
    n = o[O_N]
    if n < o[O_CAP]:
        ids[n] = tid
        if o[O_STARTS]:
            starts[n] = start_offset(o, s, byte_start)
    o[O_N] = n + 1


@njit(cache=True, nogil=True, _nrt=False)
def map_starts(o, starts, s, n0, nbase, nmap):
    """The starts written since the sink held n0 ids, byte offsets in a normalized copy of
    s[nbase..) whose bytes came from nbase + nmap[byte], put in the text's offsets and the
    sink's unit (the sink's O_UNIT restored by the caller first)."""
    if not o[O_STARTS]:
        return
    end = o[O_N] if o[O_N] < o[O_CAP] else o[O_CAP]
    for q in range(n0, end):
        starts[q] = start_offset(o, s, nbase + np.int64(nmap[np.int64(starts[q])]))
