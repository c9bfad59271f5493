/* The encoder's output sink: the ids of a call and their start offsets, in the unit the caller
 * asked for (bytes, code points or UTF-16 units), written up to the caller's capacity and counted
 * past it. Its own header because two files put tokens out: the pipeline (pipeline.c) and the
 * superword pass (superword_pass.c), which puts out a run's tokens when it ends. Inline, as every
 * token of every call goes through put. */
#ifndef ST_SINK_H
#define ST_SINK_H

#include "../base/internal.h"

/* Output sink: ids (and starts) up to cap, counting past it. */
typedef struct sink {
    uint32_t *ids;
    size_t *starts;
    size_t cap, n;
    uint32_t unit; /* ST_OFFSETS_* of starts */
    /* for code point and UTF-16 starts: text[0..pos) holds `units` units, and the last
     * character that began there began at unit offset `last` */
    const uint8_t *text;
    size_t pos, units, last;
    /* While the encoder works on a normalized copy of text[nbase..) (a HuggingFace model's NFC):
     * the offset in text of each byte of the copy is nbase + nmap[byte]; NULL otherwise. */
    const size_t *nmap;
    size_t nbase;
} sink;

/* The offset of a token starting at byte b, in the sink's unit. A token that starts inside a
 * character gets the offset of that character (tiktoken's decode_with_offsets rule), in every
 * unit. */
ST_INLINE size_t start_offset(sink *o, size_t b) {
    const uint8_t *s = o->text;
    if (o->unit == ST_OFFSETS_BYTES) {
        while (b > 0 && (s[b] & 0xC0) == 0x80) b--;
        return b;
    }
    size_t wide = o->unit == ST_OFFSETS_UTF16 ? 0xF0 : 0x100; /* 4-byte characters: 2 UTF-16 units */
    for (; o->pos < b; o->pos++) {
        uint8_t c = s[o->pos];
        if ((c & 0xC0) != 0x80) {
            o->last = o->units;
            o->units += c >= wide ? 2 : 1;
        }
    }
    return (s[b] & 0xC0) == 0x80 ? o->last : o->units;
}

ST_INLINE void put(sink *o, uint32_t id, size_t byte_start) {
    if (o->n < o->cap) {
        if (o->nmap) byte_start = o->nbase + o->nmap[byte_start];
        o->ids[o->n] = id;
        if (o->starts) o->starts[o->n] = start_offset(o, byte_start);
    }
    o->n++;
}

#endif
