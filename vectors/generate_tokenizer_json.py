"""Regenerate the tokenizer.json golden vectors in vectors/tokenizer_json/ with tokenizers.

    python vectors/generate_tokenizer_json.py           write vectors/tokenizer_json/*
    python vectors/generate_tokenizer_json.py --check   regenerate in memory; exit 1 naming every stale file

The oracle is HuggingFace tokenizers (0.23.3, the version the test extra pins). Each model is a
tiny byte-level BPE (vocab_size 420: the 256 bytes and their merges, under 40 KB) trained by
tokenizers on the SAMPLE strings of tests/test_tokenizer_json.py (text written for this project)
and the edge texts below, one model per pre-tokenizer the core implements, with the NFC
normalizer, ignore_merges and added tokens (special and not, normalized and not) spread over
them. <name>.json is the model as tokenizers writes it (Tokenizer.to_str()); cases.jsonl holds,
for each model and text: the ids with every added token matched (encode(text,
add_special_tokens=False).ids), the ids with the special ones as text (the same with
encode_special_tokens=True) and the decode of the first (decode(ids, skip_special_tokens=False)).
Training is deterministic (tokenizers' BPE trainer breaks ties by the pair), so are the files.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "tokenizer_json")
GENERATED_BY = "python vectors/generate_tokenizer_json.py"

SAMPLE = [
    "The quick brown fox jumps over the lazy dog. It's 2025; we'll see 1234567 items!",
    "Die Würde des Menschen ist unantastbar. Ça va? Ñandú, señor — déjà vu.",
    "Все люди рождаются свободными и равными в своем достоинстве и правах.",
    "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心。日本語のテキスト、カタカナとひらがな。",
    "كل الناس يولدون أحراراً متساوين في الكرامة والحقوق. हिन्दी पाठ यहाँ है। ภาษาไทย",
    "def f(x):\n    return x**2  # squares\r\n\r\n\tif x >= 10: print('big')\n\n\n",
    "한국어 문장입니다. Ελληνικά κείμενα. עברית כאן. 🙂👍🏽 emoji and 100,000.50 dollars",
    "e\u0301 a\u0308 \u1100\u1161\u11a8 Å Ω \ufb01 \u212b combining and compatibility forms",
]

# Texts at the patterns' edges (digit runs, whitespace runs before words, line breaks and the end,
# contractions in any case, punctuation runs, DeepSeek's CJK ranges, marks, NFC changes) and at
# the added tokens' (inside words, adjacent, a prefix of another, normalized, repeated).
EDGES = [
    "", " ", "  ", "\n", "\r\n", " \n ", "\t\t x", "a  b   c    ", "x \n\n y", "end   ",
    "1", "12", "123", "1234", "1234567", "٣٤٥٦", "Ⅻ½", "a1b22c333d4444",
    "it's IT'S we'll WE'LL they've I'd 'x 's", "don't", "O'Neil's",
    "!!", "...", "?!\n", " -- ", "#tag @user $5 €3 ©", "a_b `c` ://x", "\"quoted\"", "(x)[y]{z}",
    "中文，日本語。カタカナ、ひらがな「」", "\u4e00\u9fa5\u9fa6\u3040\u309f\u30a0\u30ff\u3100", "한국어", "Ωμέγα",
    "e\u0301 a\u0308 Å \u212b \ufb01", "\u0301\u0301x", "\u1100\u1161\u11a8", "naïve café",
    "\u00a0\u3000\u2028x", "\u200d\U0001f642\U0001f44d\U0001f3fd", "\ue000\U000f0000", "\x00\x7f\x1b",
    "<|s|>", "<|e|>", "x<|s|>y", "<|s|><|e|>", "<|s|<|e|>", "<think>a</think>", "word<think>word",
    "<a>", "<a><b>", "<a><b><a>", "<a><a><b>", "<｜x｜>", "a<｜x｜>b", "<\uff5cx\uff5c> <|e|>\n",
    " <|s|> ", "<|s|>\n\n", "\n<think>\n", "12<a>34", "'s<a>'s",
]

LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
DEEPSEEK = [r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
            "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"]

# name: (pre-tokenizer, NFC, ignore_merges, added tokens)
MODELS = {
    "gpt2": ("gpt2", False, False, "all"),
    "llama3_nfc_ignore_merges": ("llama3", True, True, "all"),
    "qwen2_nfc": ("qwen2", True, False, "special"),
    "deepseek_v3_ignore_merges": ("deepseek_v3", False, True, "all"),
}


def train(pre_name, nfc, ignore_merges, added):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    def byte_level(use_regex):
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)

    if pre_name == "gpt2":
        pre = byte_level(True)
    else:
        regexes = {"llama3": [LLAMA3], "qwen2": [QWEN2], "deepseek_v3": DEEPSEEK}[pre_name]
        pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r), "isolated") for r in regexes] + [byte_level(False)])
    tk = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tk.pre_tokenizer = pre
    if nfc:
        tk.normalizer = normalizers.NFC()
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False, special_tokens=[])
    tk.train_from_iterator(SAMPLE * 20 + EDGES * 3, trainer=trainer)
    tk.add_special_tokens([AddedToken("<|s|>", special=True, normalized=False),
                           AddedToken("<|e|>", special=True, normalized=False)])
    if added == "all":
        tk.add_tokens([AddedToken("<think>", special=False, normalized=False),
                       AddedToken("</think>", special=False, normalized=False),
                       AddedToken("<｜x｜>", special=False, normalized=True),
                       AddedToken("<a>", special=False, normalized=False),
                       AddedToken("<a><b>", special=True, normalized=False)])
    return tk


def ids(tk, text, specials_as_text):
    tk.encode_special_tokens = specials_as_text
    try:
        return tk.encode(text, add_special_tokens=False).ids
    finally:
        tk.encode_special_tokens = False


def generate():
    import tokenizers
    sys.path.insert(0, HERE)
    from generator_io import dump, escaper
    esc = escaper()
    files = {}
    cases = [{"_meta": {
        "generated_by": GENERATED_BY, "oracle": "tokenizers==" + tokenizers.__version__, "part": "tokenizer_json",
        "file": "cases.jsonl", "models": sorted(MODELS),
        "fields": {"model": "the model file: <model>.json",
                   "text": "the text (UTF-8)",
                   "ids": "tokenizers' encode(text, add_special_tokens=False).ids: every added token matched",
                   "ids_specials_as_text": "the same with encode_special_tokens=True: special added tokens as text",
                   "decoded": "tokenizers' decode(ids, skip_special_tokens=False)"}}}]
    for name, (pre, nfc, ignore_merges, added) in sorted(MODELS.items()):
        tk = train(pre, nfc, ignore_merges, added)
        text = tk.to_str()
        files[name + ".json"] = text + "\n"
        assert len(files[name + ".json"].encode("utf-8")) < 40000, name
        for t in SAMPLE + EDGES:
            a = ids(tk, t, False)
            cases.append({"model": name, "text": t, "ids": a, "ids_specials_as_text": ids(tk, t, True),
                          "decoded": tk.decode(a, skip_special_tokens=False)})
    cases[0]["_meta"]["records"] = len(cases) - 1
    files["cases.jsonl"] = "".join(dump(r, esc) for r in cases)
    return files


def main(argv=None):
    sys.path.insert(0, HERE)
    from generator_io import check_flag, write_or_check
    check = check_flag(__doc__, argv)
    files = generate()
    status = write_or_check(files, OUT_DIR, "generate_tokenizer_json.py", check)
    if check and status == 0:  # write_or_check looks at *.jsonl only: the models too
        for name, text in files.items():
            if name.endswith(".json"):
                with open(os.path.join(OUT_DIR, name), "rb") as f:
                    if f.read() != text.encode("utf-8"):
                        sys.stderr.write("generate_tokenizer_json.py --check: %s differs\n" % name)
                        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
