"""The naive reference trainer, phase-1 BPE and phase-2 superwords (docs/design.md §8), for clarity.

It recounts every pair from scratch at every step and replaces merges word by word; there is no
index, no queue, no incremental update. vectors/generate_train.py runs it to write
vectors/train/merges.jsonl, and checks every `hf` result against HuggingFace tokenizers itself.

    train(documents, vocab_size=..., mode="paper"|"hf", alphabet="bytes"|"ube", pattern="o200k",
          script_aware=False, scripts=None, special_tokens=(), min_frequency=0)
        -> [(left_id, right_id, count), ...]

Semantics, both modes:

- Each document is pre-tokenized on its own by vectors/oracle.py (regex.findall with the
  pattern, or the script-aware split), and pretokens are aggregated by count. Special tokens do
  not change counting: their text is ordinary text (HuggingFace's trainer does the same).
- A pretoken is a word of base symbols: its UTF-8 bytes (alphabet "bytes", ids 0-255) or its
  UBE routing (alphabet "ube": per character, a code point below U+0800 gives its UTF-8 bytes as
  symbols 0-255, U+0800 and above 256 + each byte of its UTF-16LE encoding, symbols 256-511).
- Model ids: base symbol s has id s; merge i makes id A + i, A = 256 (bytes) or 512 (ube).
- vocab_size counts the alphabet that can occur, the merges and the special tokens: at most
  vocab_size - alphabet_size - len(special_tokens) merges (ValueError if that is negative; in
  hf mode HuggingFace's count, below, can allow one more merge per colliding special).
- A merge replaces the pair's occurrences left to right without overlap, in every word. Each
  merge keeps its count: the pair's count when it was chosen.
- Training stops early when no pair is left or the best count is below min_frequency.

mode "paper" (the paper's reference implementation):
- alphabet size: 243 for bytes (every byte but C0, C1, F5-FF: the bytes valid UTF-8 can hold),
  for ube the number of symbols that routing some valid code point produces (computed below);
- a pair (x, y) with x != y counts each occurrence times the word's count; a run of k identical
  symbols x counts (x, x) floor(k / 2) times (what merging it would replace);
- the best pair has the highest count; ties go to the smallest (base symbols of the left token,
  base symbols of the right token), compared as Python compares tuples (for bytes: as bytes).

mode "hf" (HuggingFace tokenizers 0.23.3 BpeTrainer, initial_alphabet=ByteLevel.alphabet()):
- alphabet size 256, bytes only (ube is refused);
- a pair counts every adjacent occurrence (overlapping: `a a a` holds (a, a) twice);
- ties go to the smallest (hf_id(left), hf_id(right)): the 256 bytes numbered in the order of
  the code point of their GPT-2 byte-level character, merged tokens numbered after them in the
  order their strings were first made;
- HuggingFace's vocabulary maps strings to ids: first the special tokens (their text as it
  is), then the 256 byte-level characters (a character equal to a special's text is that
  special: it takes the special's id, and the vocabulary holds 255 characters), then the merged
  tokens' byte-level strings; a merge whose string is already there (equal to a special's text,
  e.g. special "the" and the merge "t"+"he", or, in principle, to an earlier merge's string)
  takes that id and does not grow the vocabulary. Training stops when the vocabulary reaches
  vocab_size, so a special that collides lets one more merge in than vocab_size - 256 -
  len(special_tokens). The hf id of a token (for ties) is its id in that vocabulary, a
  special's id when the strings collide. Model ids stay as everywhere: merge i makes A + i; a
  merge whose bytes an earlier merge already made is listed with its own id A + i, but its
  occurrences become the earlier token, the one later merges refer to (HuggingFace keeps one
  token per string). With merges applied to every word left to right, two merges making the
  same bytes did not occur in any corpus tried (random small corpora over 2-3 letters, UDHR
  text): the collision with a special's text is the case that occurs.

Phase 2, superwords (docs/design.md §8; Faster Superword paper §2-§3, Appendix B), paper mode only:

    train_superwords(documents, vocab_size, algorithm="bpe"|"boundless"|"superbpe",
                     supermerges=None, ngram_split=False, <the phase-1 options>)
        -> (merges, supermerges), each [(left_id, right_id, count), ...]

- target = vocab_size - alphabet_size - len(special_tokens); phase 1 (train() above) makes up to
  target merges, merge i makes id A + i.
- The eligible vocabulary: the base symbols and, for "boundless", every phase-1 merge made; for
  "superbpe" with s supermerges, the first r = min(made, target - s) merges.
- A pretoken is eligible when it contains a letter (\\p{L}, asked of the pinned regex module) and
  its base symbols (UTF-8 bytes, or UBE routing) are those of a token of the eligible vocabulary.
  Each document is pre-tokenized on its own (the same pre-tokenizer as phase 1); every maximal
  run of two or more adjacent eligible pretokens is a candidate, counted once per occurrence,
  aggregated over the corpus.
- n-gram split (ngram_split=True, Appendix B) replaces the aggregated candidates by pieces of
  them: c_min = max(count of the last phase-1 merge made, 15) (15 when none was made), max_len
  30; see split_ngrams below.
- The words of phase 2 are the candidates as sequences of the pretokens' token ids (the
  lowest id whose symbols are the pretoken's). Pairs are counted exactly as in phase 1 (paper:
  non-overlapping identical pairs) from scratch at every step; the best pair has the highest
  count, ties to the smallest (left base symbols, right base symbols), then (left id, right id).
  A supermerge replaces the pair left to right in every word and makes a new token whose base
  symbols are the concatenation. Only pairs with count >= max(min_frequency, 1) are taken.
- "boundless" (Algorithm 1, with the original BoundlessBPE's unlocking): the phase-1 merges are
  replayed in order, j the next one. A supermerge pair is available when both parts exist: a base
  symbol, a supermerge token, or a regular token made by a merge index < j. At each step take the
  best available supermerge pair s if it exists and (j == made, or count(s) > count(merge j));
  else, if j < made, replay merge j (j += 1); else stop. Stop also when j + supermerges = target.
- "superbpe" (SuperBPE(r, s)): keep the first r merges, then up to s supermerges, each the best
  pair; stop early when none is left.
- Ids in the result: the kept regular merges keep theirs (A + i, i < r); supermerge k makes
  A + r + k, and its parts are given in these final ids.

The HuggingFace trainer updates pair counts incrementally and never lowers the count it stored
for a pair it has merged; a recount from scratch differs from it only when a pair it merged
earlier reappears, which needs a duplicate string as above. vectors/generate_train.py checks
every hf case against tokenizers itself and fails on any difference.
"""
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import oracle  # noqa: E402  (the regex-based reference pre-tokenizer)
from generate_ube import route  # noqa: E402  (the UBE routing oracle, bit arithmetic)

MODES = ("paper", "hf")
ALPHABETS = ("bytes", "ube")
BASE = {"bytes": 256, "ube": 512}  # A: the first merge's id


def _bytes_alphabet():
    """The bytes valid UTF-8 can hold, computed from CPython's encoder over every code point."""
    seen = set()
    for cp in range(0x110000):
        if not 0xD800 <= cp <= 0xDFFF:
            seen.update(chr(cp).encode("utf-8"))
    return frozenset(seen)


def _ube_alphabet():
    """The UBE symbols that routing some valid code point produces."""
    seen = set()
    for cp in range(0x110000):
        if not 0xD800 <= cp <= 0xDFFF:
            seen.update(route(chr(cp)))
    return frozenset(seen)


_alphabets = {}


def alphabet_symbols(mode, alphabet):
    """The base symbols that can occur: what vocab_size counts."""
    key = (mode, alphabet)
    if key not in _alphabets:
        if mode == "hf":
            _alphabets[key] = frozenset(range(256))  # ByteLevel.alphabet(): every byte
        elif alphabet == "bytes":
            _alphabets[key] = _bytes_alphabet()
        else:
            _alphabets[key] = _ube_alphabet()
    return _alphabets[key]


def _gpt2_char_order():
    """hf id of each byte: its rank among the 256 bytes ordered by the code point of GPT-2's
    byte-level character (33-126, 161-172, 174-255 are themselves; the other 68 bytes map to
    256, 257, ... in byte order)."""
    visible = set(range(33, 127)) | set(range(161, 173)) | set(range(174, 256))
    char, extra = {}, 0
    for b in range(256):
        if b in visible:
            char[b] = b
        else:
            char[b] = 256 + extra
            extra += 1
    order = sorted(range(256), key=lambda b: char[b])
    return {b: k for k, b in enumerate(order)}, char


HF_BYTE_RANK, GPT2_CHAR = _gpt2_char_order()


def count_pretokens(documents, pattern="o200k", script_aware=False, scripts=None):
    """Counter {pretoken: count}, each document pre-tokenized on its own."""
    counts = Counter()
    for doc in documents:
        counts.update(oracle.pretokenize(doc, pattern, script_aware, scripts))
    return counts


def base_symbols(text, alphabet):
    return list(text.encode("utf-8")) if alphabet == "bytes" else route(text)


def _pair_counts(words, overlapping):
    """{(left, right): count} recounted from scratch over [(symbols, count)]."""
    counts = Counter()
    for syms, c in words:
        j, n = 0, len(syms)
        while j + 1 < n:
            x, y = syms[j], syms[j + 1]
            if x != y or overlapping:
                counts[(x, y)] += c
                j += 1
                continue
            k = j  # a run of identical symbols x starts at j: it holds floor(run / 2) pairs
            while k < n and syms[k] == x:
                k += 1
            counts[(x, x)] += (k - j) // 2 * c
            j = k - 1  # the last symbol of the run starts the next pair
    return counts


def _replace(syms, left, right, new):
    """syms with every (left, right) replaced by new, left to right, without overlap."""
    out, j, n = [], 0, len(syms)
    while j < n:
        if j + 1 < n and syms[j] == left and syms[j + 1] == right:
            out.append(new)
            j += 2
        else:
            out.append(syms[j])
            j += 1
    return out


def train(documents, vocab_size, mode="paper", alphabet="bytes", pattern="o200k",
          script_aware=False, scripts=None, special_tokens=(), min_frequency=0, counts=None):
    """The merges [(left_id, right_id, count)] in order. counts (a {pretoken: count} mapping)
    replaces documents when given."""
    if mode not in MODES:
        raise ValueError("mode must be one of %s, not %r" % (MODES, mode))
    if alphabet not in ALPHABETS:
        raise ValueError("alphabet must be one of %s, not %r" % (ALPHABETS, alphabet))
    if mode == "hf" and alphabet != "bytes":
        raise ValueError("mode 'hf' trains over HuggingFace's byte-level alphabet only")
    n_alpha = len(alphabet_symbols(mode, alphabet))
    budget = vocab_size - n_alpha - len(special_tokens)
    if budget < 0:
        raise ValueError("vocab_size %d is below the alphabet (%d) plus %d special tokens"
                         % (vocab_size, n_alpha, len(special_tokens)))
    if counts is None:
        counts = count_pretokens(documents, pattern, script_aware, scripts)
    A = BASE[alphabet]
    # words in a fixed order (by pretoken) so nothing depends on hashing
    words = [(base_symbols(t, alphabet), c) for t, c in sorted(counts.items())]
    base = {s: (s,) for s in range(A)}  # model id -> its base symbols
    merges = []
    if mode == "paper":
        while len(merges) < budget:
            pc = _pair_counts(words, overlapping=False)
            if not pc:
                break
            (l, r), c = min(pc.items(), key=lambda kv: (-kv[1], base[kv[0][0]], base[kv[0][1]]))
            if c < min_frequency:
                break
            new = A + len(merges)
            base[new] = base[l] + base[r]
            merges.append((l, r, c))
            words = [(_replace(s, l, r, new), wc) for s, wc in words]
        return merges

    # mode hf: HuggingFace's vocabulary is a map from byte-level strings to ids, built as its
    # trainer builds it: the special tokens first (their text as it is), then the 256 byte-level
    # characters by code point, each skipped when a special already has that string, then each
    # merge's string unless it is already there. A merge whose string is already there (a
    # special token's text, or an earlier merge's) gets that id and does not grow the vocabulary.
    w2id = {}
    for sp in special_tokens:
        w2id.setdefault(sp, len(w2id))
    for b in sorted(range(256), key=lambda b: GPT2_CHAR[b]):
        w2id.setdefault(chr(GPT2_CHAR[b]), len(w2id))
    hf_id = {b: w2id[byte_level(bytes([b]))] for b in range(256)}  # model id -> hf id
    by_string = {byte_level(bytes([b])): b for b in range(256)}     # -> the model id words use
    while len(w2id) < vocab_size:
        pc = _pair_counts(words, overlapping=True)
        if not pc:
            break
        (l, r), c = min(pc.items(), key=lambda kv: (-kv[1], hf_id[kv[0][0]], hf_id[kv[0][1]]))
        if c < min_frequency:
            break
        new = A + len(merges)
        base[new] = base[l] + base[r]
        made = byte_level(bytes(base[new]))
        if made in by_string:
            use = by_string[made]  # an earlier merge made these bytes: later pairs see that token
        else:
            use = by_string[made] = new
            hf_id[new] = w2id.setdefault(made, len(w2id))  # a special's id when it has this text
        merges.append((l, r, c))
        words = [(_replace(s, l, r, use), wc) for s, wc in words]
    return merges


def byte_level(bs):
    """GPT-2's byte-level string of bytes (the strings HuggingFace's vocabulary holds)."""
    return "".join(chr(GPT2_CHAR[b]) for b in bs)


def merge_bytes(merges, alphabet="bytes"):
    """[(left bytes, right bytes)] of merges given with model ids: what HuggingFace lists."""
    A = BASE[alphabet]
    if alphabet != "bytes":
        raise ValueError("bytes of UBE tokens are not byte strings")
    tok = {b: bytes([b]) for b in range(256)}
    out = []
    for i, (l, r, _) in enumerate(merges):
        tok[A + i] = tok[l] + tok[r]
        out.append((tok[l], tok[r]))
    return out


# ---------------------------------------------------------------------------------------------
# Phase 2: superwords.

ALGORITHMS = ("bpe", "boundless", "superbpe")
NGRAM_CMIN_FLOOR = 15  # Appendix B: c_min = max(count of the last phase-1 merge, 15)
NGRAM_MAX_LEN = 30     # Appendix B: n-grams of at most 30 pretokens

_letter = oracle.regex.compile(r"\p{L}")


def has_letter(text):
    """Whether text contains a letter (\\p{L}, any general category L*), as the pinned regex says."""
    return _letter.search(text) is not None


def vocabulary(merges, alphabet):
    """{base symbols (tuple): model id} of the base symbols and merges (the lowest id when two
    tokens have the same symbols)."""
    A = BASE[alphabet]
    syms = {s: (s,) for s in range(A)}
    vocab = {(s,): s for s in range(A)}
    for i, (l, r, _) in enumerate(merges):
        syms[A + i] = syms[l] + syms[r]
        vocab.setdefault(syms[A + i], A + i)
    return vocab


def count_candidates(documents, merges, alphabet="bytes", pattern="o200k", script_aware=False,
                     scripts=None):
    """Counter {(pretoken, pretoken, ...): count} of the maximal runs of >= 2 adjacent eligible
    pretokens of each document; merges is the eligible vocabulary's merge list."""
    vocab = vocabulary(merges, alphabet)
    out = Counter()
    for doc in documents:
        run = []
        for piece in oracle.pretokenize(doc, pattern, script_aware, scripts) + [None]:
            if piece is not None and has_letter(piece) \
                    and tuple(base_symbols(piece, alphabet)) in vocab:
                run.append(piece)
                continue
            if len(run) >= 2:
                out[tuple(run)] += 1
            run = []
    return out


def ngram_cmin(merges):
    """c_min of the n-gram split: max(count of the last phase-1 merge made, 15)."""
    return max(merges[-1][2] if merges else 0, NGRAM_CMIN_FLOOR)


def count_ngrams(candidates, c_min, max_len=NGRAM_MAX_LEN):
    """Apriori counting (Appendix B): {n-gram (tuple of pretokens): count}, the n-grams of 1 to
    max_len pretokens whose count reaches c_min. An n-gram (n > 1) is counted at a position only
    where both its (n-1)-grams were kept."""
    kept = {}
    for n in range(1, max_len + 1):
        added = Counter()
        for seq, c in candidates.items():
            for i in range(len(seq) - n + 1):
                if n > 1 and min(kept.get(seq[i:i + n - 1], 0), kept.get(seq[i + 1:i + n], 0)) < c_min:
                    continue
                added[seq[i:i + n]] += c
        if not added:
            break
        kept.update({g: c for g, c in added.items() if c >= c_min})
    return kept


def split_ngrams(candidates, c_min, max_len=NGRAM_MAX_LEN):
    """The candidates cut greedily, left to right: at position i the longest n-gram (2 <= n <=
    max_len) starting there that count_ngrams kept is a new candidate with the original's count,
    and the cut moves past it; with none, it moves on by one pretoken. Aggregated by count."""
    kept = count_ngrams(candidates, c_min, max_len)
    out = Counter()
    for seq, c in candidates.items():
        i = 0
        while i < len(seq):
            for n in range(min(max_len, len(seq) - i), 1, -1):
                if seq[i:i + n] in kept:
                    out[seq[i:i + n]] += c
                    i += n
                    break
            else:
                i += 1
    return out


def train_superwords(documents, vocab_size, algorithm="bpe", supermerges=None, ngram_split=False,
                     mode="paper", alphabet="bytes", pattern="o200k", script_aware=False,
                     scripts=None, special_tokens=(), min_frequency=0, phase1=None):
    """(merges kept, supermerges), each [(left_id, right_id, count)], in final model ids.
    phase1: the phase-1 merges of the same call (train() with the same options) when known."""
    if algorithm not in ALGORITHMS:
        raise ValueError("algorithm must be one of %s, not %r" % (ALGORITHMS, algorithm))
    if (supermerges is not None) != (algorithm == "superbpe"):
        raise ValueError("supermerges is given exactly for algorithm 'superbpe'")
    documents = list(documents)
    merges = phase1
    if merges is None:
        merges = train(documents, vocab_size, mode, alphabet, pattern, script_aware, scripts,
                       special_tokens, min_frequency)
    if algorithm == "bpe":
        if ngram_split:
            raise ValueError("ngram_split needs a superword algorithm")
        return merges, []
    if mode != "paper":
        raise ValueError("superwords are trained in paper mode only (HuggingFace has none)")
    A = BASE[alphabet]
    target = vocab_size - len(alphabet_symbols(mode, alphabet)) - len(special_tokens)
    made = len(merges)
    if algorithm == "superbpe":
        if not 0 <= supermerges <= target:
            raise ValueError("supermerges must be between 0 and %d, not %r" % (target, supermerges))
        r = min(made, target - supermerges)
    else:
        r = made
    candidates = count_candidates(documents, merges[:r], alphabet, pattern, script_aware, scripts)
    if ngram_split:
        candidates = split_ngrams(candidates, ngram_cmin(merges))
    vocab = vocabulary(merges[:r], alphabet)
    # words in a fixed order (by candidate) so nothing depends on hashing
    words = [([vocab[tuple(base_symbols(p, alphabet))] for p in seq], c)
             for seq, c in sorted(candidates.items())]
    base = {s: (s,) for s in range(A)}
    for i, (l, rr, _) in enumerate(merges):
        base[A + i] = base[l] + base[rr]
    floor = max(min_frequency, 1)

    def best(pc, ok):
        pairs = [(p, c) for p, c in pc.items() if c >= floor and ok(p)]
        if not pairs:
            return None
        return min(pairs, key=lambda kv: (-kv[1], base[kv[0][0]], base[kv[0][1]], kv[0]))

    supers = []  # (left, right, count) with internal ids: supermerge k is A + made + k

    def supermerge(pair, count):
        new = A + made + len(supers)
        base[new] = base[pair[0]] + base[pair[1]]
        supers.append((pair[0], pair[1], count))
        return [(_replace(s, pair[0], pair[1], new), wc) for s, wc in words]

    if algorithm == "superbpe":
        while len(supers) < supermerges:
            found = best(_pair_counts(words, overlapping=False), lambda p: True)
            if found is None:
                break
            words = supermerge(*found)
    else:
        j = 0

        def exists(t):
            return t < A or t >= A + made or t - A < j

        while j + len(supers) < target:
            found = best(_pair_counts(words, overlapping=False),
                         lambda p: exists(p[0]) and exists(p[1]))
            if found is not None and (j == made or found[1] > merges[j][2]):
                words = supermerge(*found)
            elif j < made:
                j += 1
            else:
                break
        r = j

    def final(t):
        return t - made + r if t >= A + made else t

    return merges[:r], [(final(l), final(rr), c) for l, rr, c in supers]


# ---- extending a trained model: SuperBPE's Stage 2 (docs/design.md §8) --------------------------
#
#     train_extension(documents, vocab_size, seeds, alphabet="bytes", pattern="superbpe",
#                     min_count=5, min_frequency=2, max_words=4, colon_space=True)
#         -> [(left_id, right_id, count), ...]   (the seeds first, then the new merges)
#
# - The documents are pre-tokenized with pattern (SuperBPE's Stage-2 pre-tokenizer: its chunks
#   span words) and aggregated; chunks counted fewer than min_count times are dropped (the text is
#   one shard).
# - The seed merges [(left, right), ...] (a trained model's first merges) are replayed in order,
#   each replacing its pair left to right in every word; each is kept whatever its count (0 when
#   no word holds it), with its count at that point (paper mode: identical pairs without overlap).
# - Then merges go on as phase 1's paper mode does (recounted from scratch, highest count, ties to
#   the smallest (left symbols, right symbols)), up to vocab_size, leaving out every pair whose
#   new token (the base symbols of left then right) holds more than max_words words (maximal runs
#   of symbols other than ' ', 32) or, with colon_space, the symbols ':' (58) then ' ' (32).
#   Training stops when no pair is left or the best allowed pair's count is below min_frequency.


def breaks_constraints(symbols, max_words, colon_space):
    """Whether a token of these base symbols breaks SuperBPE's Stage-2 constraints."""
    words, prev = 0, 32
    for c in symbols:
        if c != 32 and prev == 32:
            words += 1
        if colon_space and prev == 58 and c == 32:
            return True
        prev = c
    return bool(max_words) and words > max_words


def train_extension(documents, vocab_size, seeds, alphabet="bytes", pattern="superbpe", min_count=5,
                    min_frequency=2, max_words=4, colon_space=True, special_tokens=(), counts=None):
    n_alpha = len(alphabet_symbols("paper", alphabet))
    budget = vocab_size - n_alpha - len(special_tokens)
    if len(seeds) > budget:
        raise ValueError("%d seed merges do not fit in %d merges" % (len(seeds), budget))
    if counts is None:
        counts = count_pretokens(documents, pattern)
    counts = {t: c for t, c in counts.items() if c >= min_count}
    A = BASE[alphabet]
    words = [(base_symbols(t, alphabet), c) for t, c in sorted(counts.items())]
    base = {s: (s,) for s in range(A)}
    merges = []
    for l, r in seeds:
        c = _pair_counts(words, overlapping=False).get((l, r), 0)
        new = A + len(merges)
        base[new] = base[l] + base[r]
        merges.append((l, r, c))
        words = [(_replace(s, l, r, new), wc) for s, wc in words]
    while len(merges) < budget:
        pc = {p: c for p, c in _pair_counts(words, overlapping=False).items()
              if c > 0 and not breaks_constraints(base[p[0]] + base[p[1]], max_words, colon_space)}
        if not pc:
            break
        (l, r), c = min(pc.items(), key=lambda kv: (-kv[1], base[kv[0][0]], base[kv[0][1]]))
        if c < max(min_frequency, 1):
            break
        new = A + len(merges)
        base[new] = base[l] + base[r]
        merges.append((l, r, c))
        words = [(_replace(s, l, r, new), wc) for s, wc in words]
    return merges
