"""tiktoken.load's functions, offline: rank files and GPT-2's data-gym files from local paths.

supertok never downloads. A path is read as a file; a URL (anything with "://") is looked up
where tiktoken caches its downloads ($TIKTOKEN_CACHE_DIR, else $DATA_GYM_CACHE_DIR, else
<tmp>/data-gym-cache, under the sha1 of the URL), so code that loads tiktoken's published files
by URL runs once tiktoken (or a copy) has put them there; otherwise a FileNotFoundError says where
supertok looked.
"""
import base64
import hashlib
import json
import os
import tempfile

__all__ = ["read_file", "check_hash", "read_file_cached", "data_gym_to_mergeable_bpe_ranks",
           "dump_tiktoken_bpe", "load_tiktoken_bpe"]


def _cache_dir():
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def read_file(blobpath):
    """The bytes of a local file. A URL is not fetched: supertok has no network access by design."""
    if "://" not in blobpath:
        with open(blobpath, "rb", buffering=0) as f:
            return f.read()
    raise ValueError("%s: supertok reads local files only and never downloads; put the file on disk "
                     "(or in the tiktoken cache directory, %s, under the sha1 of its URL) and pass its "
                     "path" % (blobpath, _cache_dir() or "disabled"))


def check_hash(data, expected_hash):
    return hashlib.sha256(data).hexdigest() == expected_hash


def read_file_cached(blobpath, expected_hash=None):
    """A local path: its bytes. A URL: the copy in the tiktoken cache directory, as tiktoken
    finds it (never downloaded). The bytes are checked against expected_hash (sha256) if given."""
    if "://" not in blobpath:
        data = read_file(blobpath)
    else:
        cache_dir = _cache_dir()
        if cache_dir == "":
            return read_file(blobpath)
        cache_path = os.path.join(cache_dir, hashlib.sha1(blobpath.encode()).hexdigest())
        if not os.path.exists(cache_path):
            raise FileNotFoundError("%s: not in the tiktoken cache (%s), and supertok never downloads: "
                                    "copy the file there, or pass a local path" % (blobpath, cache_path))
        with open(cache_path, "rb", buffering=0) as f:
            data = f.read()
    if expected_hash and not check_hash(data, expected_hash):
        raise ValueError(f"Hash mismatch for data downloaded from {blobpath} (expected {expected_hash}). "
                         f"This may indicate a corrupted download. Please try again.")
    return data


def parse_tiktoken_bpe(contents, where):
    """{token bytes: rank} of a rank file's bytes; errors name the line and `where`."""
    ret = {}
    for line in contents.splitlines():
        if not line:
            continue
        try:
            token, rank = line.split()
            ret[base64.b64decode(token)] = int(rank)
        except Exception as e:
            raise ValueError(f"Error parsing line {line!r} in {where}") from e
    return ret


def load_tiktoken_bpe(tiktoken_bpe_file, expected_hash=None):
    """{token bytes: rank} of a tiktoken rank file (one "base64(token) rank" line per token)."""
    return parse_tiktoken_bpe(read_file_cached(tiktoken_bpe_file, expected_hash), tiktoken_bpe_file)


def dump_tiktoken_bpe(bpe_ranks, tiktoken_bpe_file):
    """Write {token bytes: rank} as a tiktoken rank file, by rank (a local path: tiktoken needs
    blobfile for this, supertok writes the file itself)."""
    with open(tiktoken_bpe_file, "wb") as f:
        for token, rank in sorted(bpe_ranks.items(), key=lambda x: x[1]):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")


def _data_gym_alphabet():
    """GPT-2's printable stand-ins for bytes: printable non-space bytes are themselves, the
    others are chr(256 + n) in byte order; rank order is the printable bytes first."""
    order = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    to_byte = {chr(b): b for b in order}
    n = 0
    for b in range(256):
        if b not in order:
            order.append(b)
            to_byte[chr(256 + n)] = b
            n += 1
    return order, to_byte


def data_gym_to_mergeable_bpe_ranks(vocab_bpe_file, encoder_json_file, vocab_bpe_hash=None,
                                    encoder_json_hash=None, clobber_one_byte_tokens=False):
    """{token bytes: rank} from GPT-2's vocab.bpe (merges) and encoder.json, read from local files
    (or tiktoken's cache), checked against each other as tiktoken checks them."""
    order, to_byte = _data_gym_alphabet()
    merges_text = read_file_cached(vocab_bpe_file, vocab_bpe_hash).decode()
    merges = [tuple(line.split()) for line in merges_text.split("\n")[1:-1]]

    def decode(value):
        return bytes(to_byte[c] for c in value)

    ranks = {bytes([b]): i for i, b in enumerate(order)}
    n = len(ranks)
    for first, second in merges:
        ranks[decode(first) + decode(second)] = n
        n += 1
    encoder = {decode(k): v for k, v in json.loads(read_file_cached(encoder_json_file, encoder_json_hash)).items()}
    encoder.pop(b"<|endoftext|>", None)
    encoder.pop(b"<|startoftext|>", None)
    if clobber_one_byte_tokens:
        for k in encoder:
            if len(k) == 1:
                ranks[k] = encoder[k]
    assert ranks == encoder
    return ranks
