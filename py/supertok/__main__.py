"""Command line: python -m supertok <command> ...

    python -m supertok encode [--encoding o200k_base | --model MODEL.json] [--allowed-special all] [FILE]
        prints the token ids of the text as a JSON list
    python -m supertok decode [--encoding o200k_base | --model MODEL.json] [FILE]
        reads a JSON list of ids, prints the text
    (--model: a model of merge rules, byte-level or UBE, in the format supertok.load_model reads)

    python -m supertok pretokenize [--pattern o200k] [--script-aware] [--scripts Han,Thai] [FILE]
        prints one piece per line as a JSON string (reads standard input without FILE)
    python -m supertok info
        prints the backend, the core version and the Unicode version
"""
import argparse
import json
import sys

import supertok


def main(argv=None):
    ap = argparse.ArgumentParser(prog="supertok", description="supertok command line")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pretokenize", help="split text into pre-tokenizer pieces")
    p.add_argument("file", nargs="?", help="UTF-8 text file (default: standard input)")
    p.add_argument("--pattern", default="o200k", choices=sorted(supertok.PATTERNS))
    p.add_argument("--script-aware", action="store_true", help="split into single-script chunks first")
    p.add_argument("--scripts", help="comma-separated scripts split per letter (script-aware mode)")
    sub.add_parser("info", help="backend and versions")
    e = sub.add_parser("encode", help="encode text to token ids (JSON list)")
    e.add_argument("file", nargs="?", help="UTF-8 text file (default: standard input)")
    e.add_argument("--encoding", default="o200k_base", choices=supertok.list_encoding_names())
    e.add_argument("--model", help="a merge-rules model file (JSON) instead of --encoding")
    e.add_argument("--allowed-special", default="none", choices=["none", "all"],
                   help="'all': special tokens in the text become their ids; 'none' (default): "
                        "a special token in the text is an error, as in tiktoken")
    d = sub.add_parser("decode", help="decode a JSON list of token ids to text")
    d.add_argument("file", nargs="?", help="file holding a JSON list (default: standard input)")
    d.add_argument("--encoding", default="o200k_base", choices=supertok.list_encoding_names())
    d.add_argument("--model", help="a merge-rules model file (JSON) instead of --encoding")
    args = ap.parse_args(argv)

    def encoding():
        if getattr(args, "model", None):
            return supertok.load_model(args.model)
        return supertok.get_encoding(args.encoding)

    if args.command == "decode":
        raw = open(args.file, "rb").read() if args.file else sys.stdin.buffer.read()
        try:
            ids = json.loads(raw)
            if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
                raise ValueError("expected a JSON list of integers")
            text = encoding().decode(ids)
        except (ValueError, KeyError, OverflowError, OSError) as exc:
            print("supertok: cannot decode: %s" % exc, file=sys.stderr)
            return 2
        sys.stdout.write(text)
        return 0

    if args.command == "info":
        print("backend:", supertok.backend())
        print("core:", supertok.version())
        print("unicode:", supertok.unicode_version())
        return 0
    if args.file:
        with open(args.file, "rb") as f:
            raw = f.read()
    else:
        raw = sys.stdin.buffer.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        print("supertok: input is not valid UTF-8 at byte %d" % exc.start, file=sys.stderr)
        return 2
    if args.command == "encode":
        try:
            enc = encoding()
        except (ValueError, OSError) as exc:
            print("supertok: cannot load the model: %s" % exc, file=sys.stderr)
            return 2
        try:
            ids = enc.encode(text, allowed_special="all" if args.allowed_special == "all" else frozenset())
        except ValueError as exc:
            print("supertok:", str(exc).splitlines()[0], file=sys.stderr)
            return 2
        print(json.dumps(ids))
        return 0
    scripts = None if args.scripts is None else [s for s in args.scripts.split(",") if s.strip()]
    try:
        pieces = supertok.pretokenize(text, args.pattern, args.script_aware, scripts)
    except ValueError as exc:
        print("supertok:", exc, file=sys.stderr)
        return 2
    out = sys.stdout
    for piece in pieces:
        out.write(json.dumps(piece, ensure_ascii=False))
        out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
