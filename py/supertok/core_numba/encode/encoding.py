"""Mirrors core_c/src/encode/encoding.c and encoding.h: the encoding handle (struct
st_encoding), its constructors, accessors, token lookups and decoding.

Interface fixed for the other modules: an encoding handle is an Encoding (a Python object,
never passed to a kernel whole): kind (ST__KIND_RANKS 0 / ST__KIND_RULES 1), vocab (Vocab),
rules (Rules), supers (Supers), pt (Pretokenizer), lazy (Lazy: the backtracking tables, built on
first want, bt_state, bt_debt, the piece cache and its figures cache_limit, cache_held,
cache_hits, cache_misses, and the scratch arrays calls reuse).
"""
ST__KIND_RANKS, ST__KIND_RULES = 0, 1
BT_NOT_BUILT, BT_BUILDING, BT_READY, BT_UNAVAILABLE = 0, 1, 2, 3


class Lazy:
    """st__lazy: what a handle builds or keeps after it is made (calls take turns: no atomics)."""
    __slots__ = ("bt_state", "bt_failed", "bt", "bt_debt", "scratch", "cache_limit", "cache_held", "cache_hits",
                 "cache_misses", "extra")

    def __init__(self, cache_limit):
        self.bt_state, self.bt_failed, self.bt, self.bt_debt = BT_NOT_BUILT, 0, None, 0
        self.scratch = None
        self.cache_limit, self.cache_held, self.cache_hits, self.cache_misses = cache_limit, 0, 0, 0
        self.extra = {}


class Encoding:
    __slots__ = ("kind", "vocab", "rules", "supers", "pt", "lazy", "__weakref__")

    def __init__(self, kind, vocab, rules, supers, pt, lazy):
        self.kind, self.vocab, self.rules, self.supers, self.pt, self.lazy = kind, vocab, rules, supers, pt, lazy
