"""The port of core_c/src/train: pretoken counters, supermerge candidates, the n-gram split and the
trainer (docs/design.md §8)."""
