"""The one host layer: every call of supertok.h the Python package makes, written once, over a
runtime (runtime.py: cffi, wasmtime or pywasm).

Each method converts Python values to the core's arguments through a frame of the runtime,
calls, and converts the results back; a failed call raises from its st_error report through
_status.raise_error (the `what` names the argument at fault). It decides nothing the core could:
the rules are the core's (docs/design.md §3).

The pattern of a call: `with rt.frame() as f:` make the arguments, call, read the results and
the error report; raise after the frame is left (status_str, which raise_error may call, takes a
frame of its own).
"""
import struct

from .._status import BUFFER_TOO_SMALL, INVALID_ARGUMENT, OK, raise_error
from .base import CACHE_INFO_FIELDS, Backend, HandleCache, check_int, check_section, joined_with_ends, pair_triples

_OFFSETS_CODEPOINTS = 1  # ST_OFFSETS_CODEPOINTS
_UNIT_CODEPOINT = 2      # ST_UNIT_CODEPOINT
_DECODER_STRICT = 2      # ST_UBE_STRICT
_DECODER_FINAL = 1       # ST_UBE_FINAL
_MODEL_KINDS = {1: "rules", 2: "ranks"}  # ST_MODEL_RULES, ST_MODEL_RANKS
_UNSTABLE_BATCH = 1 << 12  # completions read per st_unstable_next call


def _u32s(values):
    """values checked as uint32 ids: OverflowError (tiktoken's) otherwise."""
    for v in values:
        if not 0 <= v <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
    return values


class CoreBackend(Backend):
    """The backend protocol over one runtime."""

    def __init__(self, runtime):
        rt = self._rt = runtime
        self.name = rt.name
        self.parallel = rt.parallel
        self.prefers_image = rt.prefers_image
        self.takes_views = rt.takes_views
        self.size_max = rt.size_max
        self._frame = rt.frame
        self._null = rt.NULL
        self._pretokenizers = HandleCache()
        self._unstable = {}  # id(encoding handle) -> (st_unstable handle, weakref) on one-thread runtimes
        self._f_encode = rt.fn("st_encode")
        self._f_encode_many = rt.fn("st_encode_many")
        self._f_encode_count = rt.fn("st_encode_count")

    def _fn(self, name):
        return self._rt.fn(name)

    def _raise_error(self, err, what, items=None):
        raise_error(err, self.status_str, what, items)

    def _fail(self, status, offset, what, items=None):
        """For the calls without an st_error (st_encoding_prepare, st_model_write) or given
        none (st_token_bytes, st_token_symbols)."""
        self._raise(status, offset, what, items)

    def memory_size(self):
        """Bytes of the runtime's one linear memory (wasm: it grows, never shrinks; tests watch it
        for leaks), or None for a runtime that has none (native)."""
        size = getattr(self._rt, "memory_size", None)
        return size() if size is not None else None

    # -- library information --
    def _string(self, name, *args):
        with self._frame() as f:
            p = self._fn(name)(*args)
            return f.cstr(p) if p != self._null else None

    def version(self):
        return self._string("st_version_str")

    def unicode_version(self):
        return self._string("st_unicode_version")

    def status_str(self, status):
        return self._string("st_status_str", status)

    def status_name(self, status):
        """The status's name in the header ("ST_ERR_INVALID_UTF8"): the Python layer maps names."""
        return self._string("st_status_name", status) or "ST_ERR_%d" % status

    def script_names(self):
        with self._frame() as f:
            name = self._fn("st_script_name")
            return [f.cstr(name(i)) for i in range(self._fn("st_script_count")())]

    def script_of(self, cp):
        with self._frame():
            r = self._fn("st_script_of")(cp)
        return r - (1 << 32) if r >= (1 << 31) else r  # an int32 the wasm runtimes give unsigned

    # -- handles --
    def _new_handle(self, export, args, what, free, keep=None, also=(), ctype="void *"):
        """export(*args, &out, &err): a handle freed by `free`, or the error raised (what). args: a
        tuple, or a function of the frame making it."""
        with self._frame() as f:
            if callable(args):
                args = args(f)
            out = f.cell(ctype)
            st = self._fn(export)(*args, out, f.err)
            ptr = f.get(out)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, what)
        return self._rt.own(ptr, free, keep, also)

    def _status_call(self, export, what, *args):
        """export(*args, &err); raises (what) on failure."""
        with self._frame() as f:
            st = self._fn(export)(*args, f.err)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, what)

    def _written(self, export, args, what, ctype="uint8_t"):
        """The bytes of a writer called twice (export(*args, out, cap, &size, &err)): the size,
        then the output. args: a tuple, or a function of the frame making it (for arguments that
        live in the frame's memory)."""
        fn = self._fn(export)
        with self._frame() as f:
            if callable(args):
                args = args(f)
            st = fn(*args, self._null, 0, f.n, f.err)
            out = err = None
            if st in (OK, BUFFER_TOO_SMALL):
                size = f.get(f.n)
                op = f.out(ctype, size)
                st = fn(*args, op, size, f.n, f.err)
                if st == OK:
                    out = f.read_bytes(op, size)
            if st != OK:
                err = f.error()
        if err is not None:
            self._raise_error(err, what)
        return out

    # -- pre-tokenizers --
    def pattern_from_regex(self, pat):
        """The st_pattern id of tiktoken's pat_str pat (bytes); SupertokError
        ST_ERR_UNSUPPORTED_PATTERN for any other regex."""
        with self._frame() as f:
            out = f.cell("int")
            st = self._fn("st_pattern_from_regex")(f.bytes(pat), len(pat), out, f.err)
            err = None if st == OK else f.error()
            value = f.get(out)
        if err is not None:
            self._raise_error(err, "pat_str")
        return value

    def pretokenizer(self, pattern, flags, scripts):
        """A cached handle for (pattern id, flags, scripts as bytes or None)."""
        key = (pattern, flags, scripts)
        h = self._pretokenizers.get(key)
        if h is None:
            h = self._pretokenizers.put(key, self._new_handle("st_pretokenizer_new", lambda f: (
                pattern, flags, self._null if scripts is None else f.bytes(scripts),
                0 if scripts is None else len(scripts), self._null), "pre-tokenizer options", "st_pretokenizer_free",
                ctype="st_pretokenizer *"))
        return h

    def _text_to_array(self, export, pre, data, mid, cap, ctype, what="text"):
        """The shape several calls share: export(*pre, text, len, *mid, out, cap, &n, &err); the
        output as a list of ctype (bytes for "uint8_t")."""
        with self._frame() as f:
            op = f.out(ctype, cap)
            st = self._fn(export)(*pre, f.bytes(data), len(data), *mid, op, cap, f.n, f.err)
            out = err = None
            if st == OK:
                n = f.get(f.n)
                out = f.read_bytes(op, n) if ctype == "uint8_t" else f.read(ctype, op, n)
            else:
                err = f.error()
        if err is not None:
            self._raise_error(err, what)
        return out

    def pretokenize_ends(self, handle, data, codepoints):
        return self._text_to_array("st_pretokenize", (handle.ptr,), data, (1 if codepoints else 0,), len(data),
                                   "size_t")

    def pretokenize_join(self, handle, data, sep):
        return self._text_to_array("st_pretokenize_join", (handle.ptr,), data, (sep,), 2 * len(data), "uint8_t")

    def pretokenize_count(self, handle, data):
        with self._frame() as f:
            st = self._fn("st_pretokenize_count")(handle.ptr, f.bytes(data), len(data), f.n, f.err)
            n = f.get(f.n)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "text")
        return n

    def utf8_validate(self, data):
        with self._frame() as f:
            st = self._fn("st_utf8_validate")(f.bytes(data), len(data), f.err)
            return None if st == OK else f.error()[2]

    # -- encodings --
    def encoding_new(self, ranks, specials, pattern, flags=0, scripts=None):
        """A rank-file encoding with the pre-tokenizer (pattern id, flags, scripts)."""
        pt = self.pretokenizer(pattern, flags, scripts)  # copied by the core; cached here
        with self._frame() as f:
            out = f.cell("st_encoding *")
            st = self._fn("st_encoding_new_tiktoken")(f.bytes(ranks), len(ranks), f.bytes(specials), len(specials),
                                                     pt.ptr, self._null, out, f.err)
            h = f.get(out)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "special tokens" if err[5] == 1 else "rank file")
        return self._rt.own(h, "st_encoding_free")

    def encoding_new_merges(self, alphabet, merges, specials, pattern, flags=0, scripts=None):
        """merges: flat [left0, right0, left1, right1, ...]."""
        pt = self.pretokenizer(pattern, flags, scripts)
        with self._frame() as f:
            out = f.cell("st_encoding *")
            st = self._fn("st_encoding_new_merges")(alphabet, f.array("uint32_t", merges), len(merges) // 2,
                                                   f.bytes(specials), len(specials), pt.ptr, self._null, out, f.err)
            h = f.get(out)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "special tokens" if err[5] == 1 else "merge rules")
        return self._rt.own(h, "st_encoding_free")

    def encoding_from_image(self, image):
        """The image is copied into a block of the core's heap (st_malloc: 8-byte aligned, as
        the image must be) that the encoding borrows; it is freed after the encoding."""
        rt = self._rt
        ip = rt.alloc(len(image))
        try:
            rt.write(ip, image)
            with self._frame() as f:
                out = f.cell("st_encoding *")
                st = self._fn("st_encoding_from_image")(ip, len(image), self._null, out, f.err)
                h = f.get(out)
                err = None if st == OK else f.error()
        except BaseException:
            rt.free(ip)
            raise
        if err is not None:
            rt.free(ip)
            self._raise_error(err, "vocabulary image")
        return rt.own(h, "st_encoding_free", also=(ip,))

    def encoding_free(self, enc):
        got = self._unstable.pop(id(enc), None)  # its st_unstable handle goes first: it points at enc
        if got is not None:
            self._rt.release(got[0])
        self._rt.release(enc)

    def _int_call(self, name, *args):
        with self._frame():
            return self._fn(name)(*args)

    def alphabet(self, enc):
        return self._int_call("st_encoding_alphabet", enc.ptr)

    def prepare(self, enc):
        st = self._int_call("st_encoding_prepare", enc.ptr)
        if st == INVALID_ARGUMENT:  # an encoding that never uses the tables
            return False
        if st != OK:
            self._fail(st, None, "prepare")
        return True

    def set_cache_size(self, enc, size):
        size = check_int("size", size, 0, 1 << 1000, "size_t")  # past size_t: clamped, as documented
        st = self._int_call("st_encoding_set_cache_size", enc.ptr, min(size, self.size_max))
        if st != OK:
            self._fail(st, None, "cache size")

    def cache_info(self, enc):
        with self._frame() as f:
            out = f.out("st_cache_info", 1)
            st = self._fn("st_encoding_cache_info")(enc.ptr, out)
            values = f.cache_info(out) if st == OK else None
        if st != OK:
            self._fail(st, None, "cache info")
        return dict(zip(CACHE_INFO_FIELDS, values))

    def save_image(self, enc):
        return self._written("st_encoding_save_image", (enc.ptr,), "image")

    def save_compact(self, enc):
        return self._written("st_encoding_save_compact", (enc.ptr,), "compact vocabulary")

    def n_vocab(self, enc):
        return self._int_call("st_encoding_n_vocab", enc.ptr)

    def special_ids(self, enc):
        with self._frame():
            special = self._fn("st_encoding_special_id")
            return [special(enc.ptr, i) for i in range(self._fn("st_encoding_n_special")(enc.ptr))]

    def shared_special_ids(self, enc):
        ids = self.special_ids(enc)
        with self._frame():
            ordinary = self._fn("st_token_is_ordinary")
            return [i for i in ids if ordinary(enc.ptr, i)]

    def encode(self, enc, data, allowed, want_starts=False, disallowed=(), special_flags=0):
        """Ids of UTF-8 data under the special-token policy (allowed, disallowed: the strings,
        UTF-8 bytes; ST_SPECIAL_* flags); with want_starts, also each token's start in code points."""
        cap = len(data)
        with self._frame() as f:
            ids = f.out("uint32_t", cap)
            starts = f.out("size_t", cap) if want_starts else self._null
            st = self._f_encode(enc.ptr, f.bytes(data), cap, f.policy(allowed, disallowed, special_flags),
                                _OFFSETS_CODEPOINTS if want_starts else 0, ids, starts, cap, f.n, f.err)
            if st == OK:
                n = f.get(f.n)
                out = f.read("uint32_t", ids, n)
                if want_starts:
                    return out, f.read("size_t", starts, n)
                return out
            err = f.error()
        self._raise_error(err, "text")

    def encode_piece(self, enc, data):
        return self._text_to_array("st_encode_piece", (enc.ptr,), data, (), len(data), "uint32_t", "piece")

    def encode_with_unstable(self, enc, data, allowed, disallowed=(), special_flags=0):
        """The completions come a batch at a time (the wasm module never holds them all: pywasm's
        memory stops at 64 MiB). On a runtime whose calls take turns each encoding keeps one
        st_unstable handle (its index of the tokens is a pass over the vocabulary: seconds on
        pywasm); natively each call makes its own (about a millisecond), so threads share nothing."""
        u = None
        if not self.parallel:
            got = self._unstable.get(id(enc))
            if got is not None and got[1]() is enc:
                u = got[0]
        if u is None:
            u = self._new_handle("st_unstable_new", (enc.ptr, self._null), "encoding", "st_unstable_free",
                                 ctype="st_unstable *")
            if not self.parallel:
                import weakref
                self._unstable[id(enc)] = (u, weakref.ref(enc))
        with self._frame() as f:
            st = self._fn("st_unstable_encode")(u.ptr, f.bytes(data), len(data),
                                               f.policy(allowed, disallowed, special_flags), f.err)
            if st == OK:
                stable, completions, err = self._unstable_read(f, u.ptr)
            else:
                err = f.error()
        if self.parallel:
            self._rt.release(u)
        if err is not None:
            self._raise_error(err, "text")
        return stable, completions

    def _unstable_read(self, f, up):
        """(stable ids, set of completions, error report or None) of an st_unstable handle."""
        null = self._null
        stable_fn = self._fn("st_unstable_stable")
        stable_fn(up, null, 0, f.n, null)
        n = f.get(f.n)
        ids = f.out("uint32_t", n)
        stable_fn(up, ids, n, f.n, null)
        stable = f.read("uint32_t", ids, n)
        completions = set()
        length = self._fn("st_unstable_length")(up)
        if not length:
            return stable, completions, None
        cap = max(1 << 16, length)  # one completion always fits
        ids = f.out("uint32_t", cap)
        lengths = f.out("uint32_t", _UNSTABLE_BATCH)
        count_p = f.cell("size_t")
        next_fn = self._fn("st_unstable_next")
        while True:
            if next_fn(up, ids, cap, lengths, _UNSTABLE_BATCH, f.n, count_p, f.err) != OK:
                return stable, completions, f.error()
            count = f.get(count_p)
            if not count:
                return stable, completions, None
            flat = f.read("uint32_t", ids, f.get(f.n))
            at = 0
            for k in f.read("uint32_t", lengths, count):
                completions.add(tuple(flat[at:at + k]))
                at += k

    def encode_many(self, enc, datas, allowed, disallowed=(), special_flags=0):
        """Lists of ids for several UTF-8 texts, in one core call (natively without the GIL)."""
        return self.lists_of(self.encode_many_raw(enc, datas, allowed, disallowed, special_flags))

    def encode_many_raw(self, enc, datas, allowed, disallowed=(), special_flags=0, packed=False):
        """encode_many's core call and the copy of its results out of the core's buffers, no list
        of lists made (a thread running it natively holds the GIL only to join the texts):
        (flat ids, counts); lists_of makes the lists. packed: the flat ids as bytes (uint32,
        little-endian), no int object made for any id (the evaluation counts millions)."""
        offsets = [0]
        for d in datas:
            offsets.append(offsets[-1] + len(d))
        buf = b"".join(datas)
        cap = len(buf)
        with self._frame() as f:
            ids = f.out("uint32_t", cap)
            counts = f.out("size_t", len(datas))
            st = self._f_encode_many(enc.ptr, f.bytes(buf), f.array("size_t", offsets), len(datas),
                                     f.policy(allowed, disallowed, special_flags), ids, cap, counts, f.n, f.err)
            if st == OK:
                flat = f.read_packed("uint32_t", ids, f.get(f.n)) if packed else f.read("uint32_t", ids, f.get(f.n))
                return flat, f.read("size_t", counts, len(datas))
            err = f.error()
        self._raise_error(err, "text")

    def lists_of(self, raw):
        """The lists of ids of encode_many_raw's output, one per text."""
        flat, counts = raw
        out, k = [], 0
        for c in counts:
            out.append(flat[k:k + c])
            k += c
        return out

    def cut(self, enc, data, frm):
        """st_encoding_cut: the first offset >= frm (and > 0) where data may be cut, or len(data)."""
        frm = self._size("from", frm)
        with self._frame() as f:
            st = self._fn("st_encoding_cut")(enc.ptr, f.bytes(data), len(data), frm, f.n, f.err)
            at = f.get(f.n)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "text")
        return at

    def cuts(self, enc, data, n_parts):
        """Ascending offsets that cut data into at most n_parts parts of about equal size, each
        where the core proves the parts' ids join to the whole's (st_encoding_cut); [] if none."""
        size, out, prev = len(data), [], 0
        for k in range(1, n_parts):
            frm = max(size * k // n_parts, prev + 1)
            if frm >= size:
                break
            at = self.cut(enc, data, frm)
            if at >= size:  # none from frm to the end: none for any later part either
                break
            prev = at
            out.append(prev)
        return out

    def encode_parts(self, enc, data, cuts, allowed, disallowed=(), special_flags=0, count=False, pool=None,
                     want_starts=False):
        """encode() (or encode_count() with count) of data cut at cuts (from cuts()), one core
        call per part, the parts after the first on pool (a concurrent.futures executor) while
        this thread runs the first; natively the core runs without the GIL, so they run in
        parallel. None if any part fails: the caller encodes the whole text again, which gives
        the whole text's error."""
        bounds = [0] + list(cuts) + [len(data)]
        view = memoryview(data)

        def run(k):
            part = view[bounds[k]:bounds[k + 1]]
            try:
                if count:
                    return self.encode_count(enc, part, allowed, disallowed, special_flags)
                return self.encode(enc, part, allowed, want_starts, disallowed, special_flags)
            except Exception:
                return None

        others = range(1, len(bounds) - 1)
        later = pool.map(run, others) if pool is not None else None  # submitted now, run meanwhile
        first = run(0)
        results = [first] + (list(later) if later is not None else [run(k) for k in others])
        if any(r is None for r in results):
            return None
        if count:
            return sum(results)
        if not want_starts:
            ids = results[0]  # a new list of this call's: extended in place (C-level copies of the refs)
            for r in results[1:]:
                ids += r
            return ids
        # each part's offsets count from its own start: add the characters before it
        ids, starts, chars = [], [], 0
        for k, (part_ids, part_starts) in enumerate(results):
            ids += part_ids
            starts += [x + chars for x in part_starts] if chars else part_starts
            chars += len(bytes(view[bounds[k]:bounds[k + 1]]).decode("utf-8"))
        return ids, starts

    def encode_count(self, enc, data, allowed, disallowed=(), special_flags=0):
        with self._frame() as f:
            st = self._f_encode_count(enc.ptr, f.bytes(data), len(data), f.policy(allowed, disallowed, special_flags),
                                      f.n, f.err)
            if st == OK:
                return f.get(f.n)
            err = f.error()
        self._raise_error(err, "text")

    def _decode_call(self, name, enc, ids, mid, what="ids"):
        """st_decode / st_decode_text: at a first guess of the size (most decodes fit), else again
        at the size the core reports."""
        fn = self._fn(name)
        packed = isinstance(ids, (bytes, bytearray))  # uint32 little-endian, as encode_many_raw packs them
        n = len(ids) // 4 if packed else len(ids)
        with self._frame() as f:
            ip = f.packed("uint32_t", ids) if packed else f.array("uint32_t", ids)
            cap = 8 * n + 16
            op = f.out("uint8_t", cap)
            st = fn(enc.ptr, ip, n, *mid, op, cap, f.n, f.err)
            if st == BUFFER_TOO_SMALL:
                cap = f.get(f.n)
                op = f.out("uint8_t", cap)
                st = fn(enc.ptr, ip, n, *mid, op, cap, f.n, f.err)
            if st == OK:
                return f.read_bytes(op, f.get(f.n))
            err = f.error()
        self._raise_error(err, what, ids)  # KeyError for an id that is no token

    def decode_bytes(self, enc, ids):
        return self._decode_call("st_decode", enc, ids, ())

    def decode_text(self, enc, ids, flags):
        """UTF-8 bytes of st_decode_text; raises (KeyError, UbeDecodeError, ...) on failure."""
        return self._decode_call("st_decode_text", enc, ids, (flags,))

    def token_bytes(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._frame() as f:
            ptr = f.cell("const uint8_t *")
            st = self._fn("st_token_bytes")(enc.ptr, token, ptr, f.n, self._null)
            if st == OK:
                return f.read_bytes(f.get(ptr), f.get(f.n))
        self._fail(st, None, "token", token)  # KeyError

    def token_id(self, enc, data):
        """The id of the ordinary or special token with exactly the bytes data, or None."""
        with self._frame() as f:
            out = f.cell("uint32_t")
            st = self._fn("st_token_id")(enc.ptr, f.bytes(data), len(data), out, self._null)
            return f.get(out) if st == OK else None

    def token_symbols(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        fn = self._fn("st_token_symbols")
        with self._frame() as f:
            st = fn(enc.ptr, token, self._null, 0, f.n, self._null)
            if st == BUFFER_TOO_SMALL:
                n = f.get(f.n)
                op = f.out("uint16_t", n)
                st = fn(enc.ptr, token, op, n, f.n, self._null)
                if st == OK:
                    return f.read("uint16_t", op, n)
            elif st == OK:
                return []
        self._fail(st, None, "token", token)  # KeyError

    # -- normalization (normalize.c) --
    def normalize_nfc(self, data):
        """(NFC of UTF-8 bytes data as UTF-8 bytes, for each output byte the byte offset in data of
        the character it came from) by st_normalize_nfc; SupertokError (what "text") otherwise."""
        fn = self._fn("st_normalize_nfc")
        n = len(data)
        with self._frame() as f:
            tp = f.bytes(data)
            cap = n + n // 4 + 16  # most text grows little; the size query gives the rest
            op, mp = f.out("uint8_t", cap), f.out("size_t", cap)
            st = fn(tp, n, op, mp, cap, f.n, f.err)
            if st == BUFFER_TOO_SMALL:
                cap = f.get(f.n)
                op, mp = f.out("uint8_t", cap), f.out("size_t", cap)
                st = fn(tp, n, op, mp, cap, f.n, f.err)
            if st == OK:
                size = f.get(f.n)
                return f.read_bytes(op, size), f.read("size_t", mp, size)
            err = f.error()
        self._raise_error(err, "text")

    # -- UBE --
    def ube_encode_symbols(self, data):
        return self._text_to_array("st_ube_encode_symbols", (), data, (), len(data), "uint16_t")

    def ube_stream_new(self):
        """A state block of st_ube_stream_size() bytes on the core's heap (wasm hosts cannot
        size the struct themselves), initialised by the core."""
        rt = self._rt
        with self._frame():
            size = self._fn("st_ube_stream_size")()
        p = rt.alloc(size)
        with self._frame():
            self._fn("st_ube_stream_init")(p)
        return rt.own(p, "st_free")

    def ube_stream_feed(self, state, symbols, flags):
        """UTF-8 bytes; raises (UbeDecodeError, ...) on failure, the state then unchanged."""
        n = len(symbols)
        for s in symbols:  # a value no uint16 holds is no symbol either
            if not 0 <= s <= 0xFFFF:
                raise OverflowError("out of range integral type conversion attempted")
        with self._frame() as f:
            cap = 3 * n + 3
            op = f.out("uint8_t", cap)
            st = self._fn("st_ube_stream_feed")(state.ptr, f.array("uint16_t", symbols), n, flags, op, cap, f.n,
                                               f.err)
            if st == OK:
                return f.read_bytes(op, f.get(f.n))
            err = f.error()
        self._raise_error(err, "symbols")

    # -- streaming decoding and decode_with_offsets (decoder.c) --
    def decoder_new(self, enc, strict):
        """A streaming decoder over enc (kept alive with it); strict: malformed text raises."""
        return self._new_handle("st_decoder_new", (enc.ptr, _DECODER_STRICT if strict else 0, self._null),
                                "decoder", "st_decoder_free", keep=enc, ctype="st_decoder *")

    def decoder_feed(self, dec, ids, final=False):
        """UTF-8 bytes completed by ids (a list of ints); final ends the stream. On an error
        the decoder is unchanged: SupertokError with status, offset (the id's index in the
        stream) and token; OverflowError for an id outside uint32."""
        return self._decode_call("st_decoder_feed", dec, _u32s(ids), (_DECODER_FINAL if final else 0,),
                                 "decoder ids")

    def decoder_reset(self, dec):
        with self._frame():
            self._fn("st_decoder_reset")(dec.ptr)

    def decode_with_offsets(self, enc, ids):
        """(UTF-8 bytes, code point offsets) of st_decode_with_offsets; SupertokError (offset:
        the index of the id) otherwise; OverflowError for an id outside uint32."""
        n = len(ids)
        fn = self._fn("st_decode_with_offsets")
        null = self._null
        with self._frame() as f:
            ip = f.array("uint32_t", _u32s(ids))
            offs = f.out("size_t", n)
            st = fn(enc.ptr, ip, n, _UNIT_CODEPOINT, null, 0, f.n, offs, f.err)
            out = b""
            if st == BUFFER_TOO_SMALL:  # the size query
                size = f.get(f.n)
                op = f.out("uint8_t", size)
                st = fn(enc.ptr, ip, n, _UNIT_CODEPOINT, op, size, f.n, offs, f.err)
                if st == OK:
                    out = f.read_bytes(op, size)
            if st == OK:
                return out, f.read("size_t", offs, n)
            err = f.error()
        self._raise_error(err, "decoder ids")

    # -- model files (docs/formats/model-format.md) --
    def _model_parse(self, data):
        """A parsed model (st_model_parse; free it with st_model_free), or ModelError raised."""
        with self._frame() as f:
            out = f.cell("st_model *")
            st = self._fn("st_model_parse")(f.bytes(data), len(data), self._null, out, f.err)
            m = f.get(out)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "model")
        return m

    def _model_free(self, m):
        with self._frame():
            self._fn("st_model_free")(m)

    def _pairs(self, export, handle, section=None):
        """pair_triples of what export(handle, [section,] &pairs, &counts) lists (a NULL counts
        pointer: no counts): st_model_pairs, st_trainer_merges, st_trainer_supermerges."""
        with self._frame() as f:
            pairs_p, counts_p = f.cell("const uint32_t *"), f.cell("const uint64_t *")
            args = (handle,) if section is None else (handle, f.bytes(section + b"\0"))  # a C string
            k = self._fn(export)(*args, pairs_p, counts_p)
            if not k:
                return []
            cp = f.get(counts_p)
            return pair_triples(f.read("uint32_t", f.get(pairs_p), 2 * k),
                                f.read("uint64_t", cp, k) if cp != self._null else None)

    def encoding_new_model(self, data):
        """(handle, meta) for a model file in the text format (bytes): the core parses and
        validates it. meta: name, kind ("rules"/"ranks"), alphabet (ST_ALPHABET_*), pattern (id),
        flags, scripts (bytes, or None for the default set)."""
        m = self._model_parse(data)
        try:
            with self._frame() as f:
                fn = self._fn
                p = fn("st_model_name")(m, f.n)
                name = f.read_bytes(p, f.get(f.n)).decode("ascii")
                sc = fn("st_model_scripts")(m, f.n)
                meta = {"name": name, "kind": _MODEL_KINDS[fn("st_model_kind")(m)],
                        "alphabet": fn("st_model_alphabet")(m), "pattern": fn("st_model_pattern")(m),
                        "flags": fn("st_model_pretokenizer_flags")(m) & 0xFFFFFFFF,
                        "scripts": None if sc == self._null else f.read_bytes(sc, f.get(f.n))}
            meta["supermerges"] = self._pairs("st_model_pairs", m, section=b"supermerges")
            return self._new_handle("st_encoding_from_model", (m, self._null), "model", "st_encoding_free",
                                    ctype="st_encoding *"), meta
        finally:
            self._model_free(m)

    def encoding_new_tokenizer_json(self, data):
        h = self._new_handle("st_encoding_new_tokenizer_json", lambda f: (f.bytes(data), len(data), self._null),
                             "tokenizer.json", "st_encoding_free", ctype="st_encoding *")
        ids = self.special_ids(h)
        with self._frame():  # frames do not nest (a wasm runtime's calls take turns)
            fn = self._fn
            added = {i: fn("st_encoding_added_flags")(h.ptr, i) for i in ids}
            return h, {"pattern": fn("st_encoding_pattern")(h.ptr), "added": added}

    def model_pairs(self, data, section):
        """[(left, right, count or None), ...] of a section of a model file (st_model_pairs)."""
        name = check_section(section)
        m = self._model_parse(data)
        try:
            return self._pairs("st_model_pairs", m, section=name)
        finally:
            self._model_free(m)

    def model_normalize(self, data):
        """The canonical text of a model file (st_model_parse + st_model_write)."""
        m = self._model_parse(data)
        try:
            fn = self._fn("st_model_write")
            with self._frame() as f:
                fn(m, self._null, 0, f.n)
                size = f.get(f.n)
                op = f.out("char", size)
                st = fn(m, op, size, f.n)
                out = f.read_bytes(op, size) if st == OK else None
            if st != OK:
                self._fail(st, None, "model")
            return out
        finally:
            self._model_free(m)

    def model_write_rules(self, name, alphabet, pattern, merges, specials, comments):
        """A model file of merge rules from its fields (st_model_write_rules): name (ASCII bytes),
        merges flat [left0, right0, ...], specials [(UTF-8 bytes, id), ...], comments (UTF-8 bytes)."""
        stext, sends = joined_with_ends([t for t, _ in specials])
        ctext, cends = joined_with_ends(comments)
        return self._written("st_model_write_rules", lambda f: (
            f.bytes(name), len(name), alphabet, pattern, f.array("uint32_t", merges), len(merges) // 2,
            f.bytes(stext), f.array("size_t", sends), f.array("uint32_t", [i for _, i in specials]), len(sends),
            f.bytes(ctext), f.array("size_t", cends), len(cends)), "model fields", ctype="char")

    # -- exports to other libraries' formats (docs/formats/export.md) --
    def encoding_export(self, enc, format):
        return self._written("st_encoding_export", (enc.ptr, format), "export", ctype="char")

    def duplicate_tokens(self, enc):
        fn = self._fn("st_encoding_duplicate_tokens")
        with self._frame() as f:
            st = fn(enc.ptr, self._null, 0, f.n, f.err)
            out = err = None
            if st in (OK, BUFFER_TOO_SMALL):
                n = f.get(f.n)
                pairs = f.out("uint32_t", 2 * n)
                st = fn(enc.ptr, pairs, n, f.n, f.err) if n else OK
                if st == OK:
                    flat = f.read("uint32_t", pairs, 2 * n)
                    out = list(zip(flat[0::2], flat[1::2]))
            if st != OK:
                err = f.error()
        if err is not None:
            self._raise_error(err, "export")
        return out

    # -- training (docs/design.md §8): counters and phase-1 trainers --
    # Natively the GIL is released around every core call, so threads that each feed their own
    # counter count in parallel; a wasm module runs one call at a time (the threads of a
    # training then share one counter). Handles are freed at once by *_free (idempotent), or by
    # their finalizer when dropped.
    def counter_new(self, pattern, flags, scripts):
        return self._new_handle("st_counter_new", lambda f: (
            pattern, flags, self._null if scripts is None else f.bytes(scripts), 0 if scripts is None else len(scripts),
            self._null), "pre-tokenizer options", "st_counter_free", ctype="st_counter *")

    def counter_free(self, counter):
        self._rt.release(counter)

    def counter_add(self, counter, data, flags):
        with self._frame() as f:
            st = self._fn("st_counter_add")(counter.ptr, f.bytes(data), len(data), flags, f.err)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "text")

    def _texts_call(self, export, handle, texts, what):
        """export(handle, joined texts, ends, n, &err): the list-taking calls."""
        buf, ends = joined_with_ends(texts)
        with self._frame() as f:
            st = self._fn(export)(handle.ptr, f.bytes(buf), f.array("size_t", ends), len(ends), f.err)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, what)

    def counter_add_documents(self, counter, datas):
        self._texts_call("st_counter_add_documents", counter, datas, "documents")

    def counter_add_pretoken(self, counter, data, count):
        count = self._u64("count", count)
        with self._frame() as f:
            st = self._fn("st_counter_add_pretoken")(counter.ptr, f.bytes(data), len(data), count, f.err)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "pretoken")

    def counter_merge(self, into, frm):
        self._status_call("st_counter_merge", "counts", into.ptr, frm.ptr)

    def counter_prune(self, counter, min_count):
        self._status_call("st_counter_prune", "counts", counter.ptr, self._u64("min_count", min_count))

    def counter_token_counts(self, counter, enc):
        n = self.n_vocab(enc)
        with self._frame() as f:
            out = f.out("uint64_t", n)
            st = self._fn("st_counter_token_counts")(counter.ptr, enc.ptr, out, n, f.err)
            if st == OK:
                return f.read("uint64_t", out, n)
            err = f.error()
        self._raise_error(err, "counts")

    def counter_stat(self, counter, what):
        with self._frame():
            return self._fn("st_counter_stat")(counter.ptr, what)

    def counter_save(self, counter):
        return self._written("st_counter_save", (counter.ptr,), "counts")

    def counter_load(self, counter, data):
        with self._frame() as f:
            st = self._fn("st_counter_load")(counter.ptr, f.bytes(data), len(data), f.err)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "counts")

    def trainer_new(self, counter, mode, alphabet, vocab_size, min_frequency, n_specials):
        vocab_size = self._u64("vocab_size", vocab_size)
        min_frequency = self._u64("min_frequency", min_frequency)
        n_specials = self._size("the number of special tokens", n_specials)
        return self._new_handle("st_trainer_new", (counter.ptr, mode, alphabet, vocab_size, min_frequency,
                                                   n_specials, self._null), "training options", "st_trainer_free",
                                ctype="st_trainer *")

    def trainer_free(self, trainer):
        self._rt.release(trainer)

    def trainer_set_vocab_size(self, trainer, vocab_size):
        self._status_call("st_trainer_set_vocab_size", "training options", trainer.ptr,
                          self._u64("vocab_size", vocab_size))

    def trainer_set_specials(self, trainer, specials):
        self._texts_call("st_trainer_set_specials", trainer, specials, "special tokens")

    def trainer_step(self, trainer, max_merges):
        max_merges = self._size("max_merges", max_merges)
        with self._frame() as f:
            st = self._fn("st_trainer_step")(trainer.ptr, max_merges, f.n, f.err)
            made = f.get(f.n)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "training")
        return made

    def trainer_stat(self, trainer, what):
        with self._frame():
            return self._fn("st_trainer_stat")(trainer.ptr, what)

    def trainer_merges(self, trainer):
        return self._pairs("st_trainer_merges", trainer.ptr)

    def trainer_supermerges(self, trainer):
        return self._pairs("st_trainer_supermerges", trainer.ptr)

    # -- superwords: phase 2 --
    def trainer_set_superwords(self, trainer, algorithm, supermerges, flags):
        supermerges = self._u64("supermerges", supermerges)
        self._status_call("st_trainer_set_superwords", "superwords", trainer.ptr, algorithm, supermerges, flags)

    def trainer_set_seed_merges(self, trainer, pairs, base_name, max_words, flags, min_count):
        with self._frame() as f:
            st = self._fn("st_trainer_set_seed_merges")(trainer.ptr, f.array("uint32_t", pairs), len(pairs) // 2,
                                                        f.bytes(base_name), len(base_name), max_words, flags,
                                                        self._u64("min_count", min_count), f.err)
            err = None if st == OK else f.error()
        if err is not None:
            self._raise_error(err, "training options")

    def trainer_candidates_new(self, trainer):
        return self._new_handle("st_trainer_candidates_new", (trainer.ptr, self._null), "candidates",
                                "st_counter_free", ctype="st_counter *")

    def trainer_candidates_add(self, trainer, candidates):
        self._status_call("st_trainer_candidates_add", "candidates", trainer.ptr, candidates.ptr)

    def trainer_candidates_spec(self, trainer):
        return self._written("st_trainer_candidates_spec", (trainer.ptr,), "candidates spec")

    def candidates_new(self, spec):
        return self._new_handle("st_candidates_new", lambda f: (f.bytes(spec), len(spec), self._null),
                                "candidates spec", "st_counter_free", ctype="st_counter *")

    def trainer_write_model(self, trainer, name, specials):
        text, ends = joined_with_ends(specials)
        return self._written("st_trainer_write_model", lambda f: (
            trainer.ptr, f.bytes(name), len(name), f.bytes(text), f.array("size_t", ends), len(ends)),
            "trained model", ctype="char")
