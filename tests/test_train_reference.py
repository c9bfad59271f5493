"""The naive reference trainer's phase 2 (vectors/train_reference.py) on examples worked by hand
from docs/design.md §8, so the oracle of vectors/train/merges.jsonl is itself checked.

Each expectation below is derived step by step in the comments, from the semantics alone.
"""
import os
import sys

from collections import Counter

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "vectors"))
import train_reference as ref  # noqa: E402

ALPHA = 243  # paper mode, bytes
X, Y, A, SP = ord("x"), ord("y"), ord("a"), ord(" ")


def test_boundless_supermerge_takes_a_regular_slot():
    # pretokens: "x", " y" (twice), "y", " x". Phase 1, target 2: (" ", "y") count 2 -> 256,
    # (" ", "x") count 1 -> 257. Candidates: ("x", " y") x2, ("y", " x") x1.
    # Boundless: step 1, (x, 256) is the best pair but 256 is not made yet (j = 0): replay merge 0.
    # Step 2: (x, 256) count 2 > merge 1's count 1: the supermerge, and 1 + 1 = target: stop.
    docs = ["x y", "x y", "y x"]
    assert ref.train(docs, ALPHA + 2) == [(SP, Y, 2), (SP, X, 1)]
    merges, supers = ref.train_superwords(docs, ALPHA + 2, "boundless")
    assert merges == [(SP, Y, 2)]
    assert supers == [(X, 256, 2)]  # it makes id 256 + 1 + 0 = 257
    # SuperBPE(s = 1): r = min(2, 2 - 1) = 1, so " x" is not eligible: ("x", " y") x2 only
    assert ref.train_superwords(docs, ALPHA + 2, "superbpe", 1) == (merges, supers)


def test_identical_adjacent_tokens_count_without_overlap():
    # "a a a a a": pretokens "a" and four " a". Phase 1: (" ", "a") count 4 -> 256, then no pair.
    # Candidate: [97, 256, 256, 256, 256] once: (256, 256) counts floor(4 / 2) = 2, (97, 256) 1.
    # Boundless, target 3: replay merge 0 (nothing available before), then (256, 256) -> 257:
    # [97, 257, 257]; then (97, 257) and (257, 257) both count 1: the tie goes to the smaller
    # left symbols, (32, 97, 32, 97) < (97,): (257, 257) -> 258.
    merges, supers = ref.train_superwords(["a a a a a"], ALPHA + 3, "boundless")
    assert merges == [(SP, A, 4)]
    assert supers == [(256, 256, 2), (257, 257, 1)]


def test_runs_are_cut_by_ineligible_pretokens_and_documents():
    # "x y" and "x, y": the comma cuts the second run into single pretokens (no candidate);
    # a document boundary cuts as well.
    merges = ref.train(["x y", "x, y", " y"], ALPHA + 1)
    assert merges == [(SP, Y, 3)]
    assert ref.count_candidates(["x y", "x, y", "x", " y"], merges) == Counter({("x", " y"): 1})
    # digits and punctuation never hold a letter: "1" is a base symbol, still not eligible
    assert ref.count_candidates(["x 1 y"], merges) == Counter()


def test_ngram_count_and_greedy_split():
    # c_min 15. n = 1: a 21, b 21, c 10, d 10, x 1 -> a, b kept. n = 2: (a, b) 21 (both parts
    # kept everywhere); (b, c), (b, d), (x, a) have a part below c_min -> never counted. n = 3:
    # nothing can be counted: stop. Split: (a b c) -> (a b); (a b d) -> (a b); (x a b): x starts
    # no kept n-gram, then (a b). Aggregated: (a b) 21.
    cands = Counter({("a", "b", "c"): 10, ("a", "b", "d"): 10, ("x", "a", "b"): 1})
    assert ref.count_ngrams(cands, 15) == {("a",): 21, ("b",): 21, ("a", "b"): 21}
    assert ref.split_ngrams(cands, 15) == Counter({("a", "b"): 21})
    # the longest kept n-gram wins, and pieces of one pretoken are dropped
    cands = Counter({("p", "q", "r", "s"): 20, ("q", "r"): 5, ("s", "p"): 1})
    kept = ref.count_ngrams(cands, 15)
    assert ("p", "q", "r", "s") in kept and ("q", "r") in kept and ("s", "p") not in kept
    assert ref.split_ngrams(cands, 15) == Counter({("p", "q", "r", "s"): 20, ("q", "r"): 5})
    # c_min: max(count of the last phase-1 merge, 15)
    assert ref.ngram_cmin([]) == 15
    assert ref.ngram_cmin([(1, 2, 40), (3, 4, 16)]) == 16
    assert ref.ngram_cmin([(1, 2, 40), (3, 4, 7)]) == 15
