"""Mirrors core_c/src/formats/vocab.c and vocab.h: the token store (st_vocab), merge rules
(st_rules) and supermerges (st_supers), rank files, images and compact images.

Interface fixed for the other modules (fields as the C structs; every array field is an array,
empty where C has NULL; ints are Python ints):
  Vocab(n_ids, n_ordinary, n_special, table_mask, bytes_len, offsets uint32[n_ids + 1],
        bytes uint8[bytes_len + 16], table uint64[table_mask + 1], special_ids uint32[n_special],
        n_extra, extra uint32[3 * n_extra], byte_ids uint32[256], pair_ids uint32[65536] or [0],
        alphabet)
  Rules(slots uint64[mask + 1] (or [0] for none), mask, base)
  Supers(rules: Rules, n, shift, eligible uint64[], parts uint64[], filter uint64[])
Kernels (njit): vocab_span, vocab_special_string, vocab_probe, vocab_lookup_short, vocab_find,
vocab_lookup, vocab_is_special, vocab_ordinary, rule_find, supers_find, supers_parts, bit
(vocab.h's inline functions); vocab_parse_tiktoken, vocab_from_merges, image and compact
readers and writers (vocab.c).
"""
from collections import namedtuple

Vocab = namedtuple("Vocab", "n_ids n_ordinary n_special table_mask bytes_len offsets bytes table special_ids "
                            "n_extra extra byte_ids pair_ids alphabet")
Rules = namedtuple("Rules", "slots mask base")
Supers = namedtuple("Supers", "rules n shift eligible parts filter")

ST_RULES_MAX_IDS = (1 << 21) - 1
ST_SUPER_LEFT, ST_SUPER_RIGHT = 1, 2
