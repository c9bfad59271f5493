"""Regenerate the golden pre-tokenizer vectors in vectors/pretokenize/ from the oracle.

    python vectors/generate.py           write vectors/pretokenize/*.jsonl
    python vectors/generate.py --check   regenerate in memory; exit 1 naming every stale file

The expected pieces come from vectors/oracle.py (regex.findall with tiktoken 0.14's pattern
strings, SuperBPE's Stage-2 regex split "isolated" for superbpe.jsonl, the Split regexes of
Llama 3, Qwen 2/3 and DeepSeek V3's tokenizer.json for llama3.jsonl, qwen2.jsonl and
deepseek_v3.jsonl (DeepSeek's a sequence of three isolated splits), whose plain records are also
checked against HuggingFace tokenizers' Split (or Sequence of Splits), plus the script chunker of
docs/design.md §5), so the generator refuses to run unless the
installed `regex` is exactly the pinned oracle (docs/design.md §4). The case texts are the hand-written
lists below plus real text from ../shared/corpora/udhr.jsonl.xz (the only corpus whose text may
be committed), read from the excerpts vendored in vectors/texts/udhr.jsonl (vectors/vendor_udhr.py
makes them), so it runs on a fresh clone.
Output is deterministic: the same bytes on every run.
"""
import importlib.metadata
import json
import os
import sys

from generator_io import check_flag, dump as _dump, escaper as _escaper, write_or_check

ORACLE_REGEX = "2024.11.6"
UNICODE_VERSION = "16.0"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "pretokenize")

PATTERN_NAMES = ("gpt2", "cl100k", "o200k")  # tiktoken's; script_aware.jsonl holds these
ORACLE_TOKENIZERS = "0.23.3"  # the isolated patterns' pieces are checked against HuggingFace's Split too
HF_PATTERNS = ("llama3", "qwen2", "deepseek_v3")  # HuggingFace models' pre-tokenizers
CUSTOM_SCRIPTS = (["Han"], [], ["Latin", "Greek"])

# ---------------------------------------------------------------------------------------------
# Case texts. Invisible and unusual characters are written as escapes on purpose.

WHITESPACE = [
    " ", "\t", "\n", "\v", "\f", "\r", "\r\n", "\x85", "\xa0", "\u1680",
    "\u2000", "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007", "\u2008",
    "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
]

# Look like spaces or separators but are not White_Space, so not \s.
NOT_WHITESPACE = ["\ufeff", "\u200b", "\x1c", "\x1d", "\x1e", "\x1f", "\u180e", "\u200c",
                  "\u200d", "\u2060"]

# A few characters of every general category (Unicode 16).
BY_CATEGORY = [
    ("Lu", "AÉΩЯ\u1c89\U0001d400\U00010d50"),
    ("Ll", "aßωяſ\u1c8a\U0001d41a"),
    ("Lt", "ǅᾈ"),
    ("Lm", "ʰー々\u02bc\U00016d40"),
    ("Lo", "ªℵ中あ가אبก\U00020000\U000105c0"),
    ("Mn", "\u0301\u064e\u094d\u0e31\ufe0f\u0897\U000e0100"),
    ("Mc", "\u093e"),
    ("Me", "\u20dd"),
    ("Nd", "0٣३３\U0001d7d8\U00010d40\U0001ccf0"),
    ("Nl", "Ⅻⅰ\U00010140"),
    ("No", "½²①"),
    ("Pc", "_‿"),
    ("Pd", "-—"),
    ("Ps", "(「"),
    ("Pe", ")」"),
    ("Pi", "«‘"),
    ("Pf", "»’"),
    ("Po", "!.,'\"#/\\?。؟"),
    ("Sm", "+<|∑"),
    ("Sc", "$€"),
    ("Sk", "^`¨"),
    ("So", "©\U0001f44d\U0001cc00\u2ffc"),
    ("Zs", " \xa0\u3000"),
    ("Zl", "\u2028"),
    ("Zp", "\u2029"),
    ("Cc", "\x00\x7f\x1c\x85\t\n\r"),
    ("Cf", "\u00ad\u200b\u200d\ufeff\u180e\U000e0001"),
    ("Co", "\ue000\U0010fffd"),
    # Unassigned in Unicode 16 (the last two are assigned in Unicode 17), and a noncharacter.
    ("Cn", "\u0378\uffff\U000e0080\U00010940\U000323b0"),
]


def single_character_cases():
    out = []
    for _, chars in BY_CATEGORY:
        out += list(chars)                          # each alone
        out += [" " + c + "a" for c in chars[:2]]   # after a space, before a letter
        out.append("a" + chars + "b")
    return out


def whitespace_cases():
    out = []
    for w in WHITESPACE:
        out += [
            w,
            "a" + w * 3 + "b",                               # a run before a letter
            "x" + w * 2 + "12" + w * 2 + "!?" + w * 2,      # before digits, punctuation, at the end
            w + " a" + w + "\n" + w + "x",
        ]
    out += [
        "", " ", "  ", "   x", "x   ", "\n\n\n", "  \n  ", " \t \n  \r\n\t x",
        "\t\tif x:\n\t\t\treturn 1\n", "a\r\n\r\nb", "a \r\n b", "a\n \nb", "a  \n\n  b  ",
        "\u3000\u3000中文", "\xa0\xa0\xa0123", "\u2028\u2029\x85 a", " \u2009\u200a!",
        "x \xa0 \u3000", "!!  \n\n  ??", "\n\r", "\r \n", " " * 10 + "a",
    ]
    return out


def not_whitespace_cases():
    out = []
    for c in NOT_WHITESPACE:
        out += ["a" + c + "b", " " + c + "b", c + " x!" + c + "\n"]
    return out


CONTRACTION_SUFFIXES = ["s", "S", "t", "T", "re", "RE", "Re", "rE", "ve", "VE", "ll", "LL", "Ll",
                        "d", "D", "m", "M", "ſ"]


def contraction_cases():
    out = []
    for x in CONTRACTION_SUFFIXES:
        out += ["it'" + x, " '" + x + " go", "x'" + x + "y"]
    out += [
        # near misses
        "'x", "it'x", "''", "it''s", "'sx", "it'sx", "it\u2019s", "IT\u2019S", "\u2019s",
        "it'", "'", "''s", "'s's", "'re'", "'S'T'RE", "' s", "'\ns", "'\u0301s", "'s\u0301",
        "'ſt", "it'ſ", "'\ufb05", "'\ufb06", "'\uff33", "'İ", "'\u212a", "it\u02bcs",
        # in context
        "don't", "DON'T", "Don'T", "I'm here. You're there. They'll come. We've been. He'd go.",
        "I'M HERE. YOU'RE THERE. THEY'LL COME. WE'VE BEEN. HE'D GO.", "y'all", "rock'n'roll",
        "l'été", "a'b'c", "o'clock", "'12", "he's'", "  's", "\n's", "'s\n", "Ma'am", "'tis",
        "don't\u2019t", "the cat's toy's", "ſ's", "'ll've", "1's", "a's 1's !'s",
    ]
    return out


DIGIT_SETS = [
    # lengths 1..10 of the first five, a few lengths of the rest
    "0123456789",
    "٠١٢٣٤٥٦٧٨٩",                        # Arabic-Indic
    "०१२३४५६७८९",                        # Devanagari
    "０１２３４５６７８９",              # fullwidth
    "⁰¹²³⁴⁵⁶⁷⁸⁹",                        # superscripts (No)
    "۰۱۲۳۴۵۶۷۸۹",                        # Extended Arabic-Indic
    "๐๑๒๓๔๕๖๗๘๙",                        # Thai
    "".join(map(chr, range(0x1D7CE, 0x1D7D8))),  # mathematical bold digits (astral Nd)
]


def digit_cases():
    out = []
    for i, digits in enumerate(DIGIT_SETS):
        for n in range(1, 11) if i < 5 else (1, 3, 4, 7, 10):
            out.append(digits[:n])
    out += [
        " 1234567", "x1234567y", "12 345", "1,234,567.89", "3.14159", "v1.2.3", "0x1F",
        "Ⅻ", "ⅫⅫⅫⅫ", "½½½½", "1½", "Ⅻ12", "①②③④⑤", "x²", "a1", "1a", " 12a", "  123",
        "٣٤٥abc", "١٢٣٤ ٥٦", "2024年1月1日", "१२३ रुपये", "1\u0301", "12\u20e3", "1\u20e3234",
        "$1,234.56", "-42", "+1e-10", "2024-01-01T12:00:00Z", "100%", "1/2", "12\n34",
        "1234567890123", "0" * 7, "123abc456def", "a1b2c3", "١2٣4", "１２3４",
    ]
    return out


def punctuation_cases():
    return [
        "!!\n/\n", " ...//\r\n", "!!!", "...", " ...", "?!\n", "?!\r\n\r\n", "a!!\nb", "//",
        " //\n//", "http://example.com/path?q=1&r=2#frag", "foo.bar(baz);\n", "--->\n", "«»",
        "「」\n", "。。\n", "!!\n\n\n", "!\r", "!\r\n/", ",\n/", "*/\n/*", "#!/usr/bin/env python\n",
        "...\u2028", "!!\x85", "!/\n/!", "(\n)", ". \n", "''\n", "!!/\n\n/ x", " !!\r\r\n\n",
        "x.\n\n\ny", "a, b; c: d.", "\"quoted\"", "(parenthesised)", "[1, 2, 3]", "{\"k\": \"v\"}",
        "<html><body>hi</body></html>", "user@example.com", "a->b=>c", "x != y && y <= z",
        "/* comment */", "// comment\n", "#include <stdio.h>\n", "— dash —", "… ellipsis …",
        "¿Qué? ¡Sí!", "؟،؛", "।॥", "、。「」『』", "!\u0301", "!!\t\n", "! \n", "!\v/",
        "@@ -1,3 +1,4 @@\n", "~~~\n", "```python\nprint('hi')\n```\n", "==\n==\n",
    ]


def superbpe_cases():
    """Cases aimed at SuperBPE's Stage-2 split (\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S),
    isolated): digit runs of every length, runs of spaces before words, at the end, before line
    breaks and other whitespace, punctuation runs with and without a leading space and trailing
    CR, LF and '/', single punctuation, long lines that stay one piece."""
    out = ["1" * n for n in range(1, 14)] + ["a" + "7" * n + "b" for n in range(1, 8)]
    out += [" " * n for n in range(1, 6)]
    for n in range(1, 6):
        sp = " " * n
        out += ["a" + sp + "b", sp + "b", "a" + sp, "a" + sp + "\n", "a" + sp + "\tb", "a" + sp + "\r\nb",
                "a" + sp + "!!", "a" + sp + "!b", "a" + sp + "1", "a" + sp + "\xa0b", "a" + sp + "\u3000",
                "a" + sp + "\u2028b", "a" + sp + "\x85b", "a" + sp + "\u0301b"]
    out += [
        "\t", "\t\t", " \t", "\t ", "a\tb", "a \t b", "a\r\nb", "a \r\n b", "\r\n\r\n", " \r\n",
        "!", "!a", "a!", "a!b", " !", " !a", "a, b. c; d: e? f!", "don't stop", "it's 'quoted'",
        "!!", " !!", "  !!", "!!!", "!!\r", "!!\n", "!!\r\n", "!!/", "!!\n/\n//x", " ...\r\n\r\nNext",
        "!\n", "!\r\n", "!/", " !/", ".\n\n", "?!", "a?!b", "a ?! b", "--", "a--b", "a -- b",
        "http://x.org/a/b", "x://", "1.5", "1,000,000", "3.14159265", "12:30:45", "(1)", "[12]",
        "\xa0", "\xa0\xa0", " \xa0", "\xa0 ", "a\xa0b", "\u3000\u3000x", " \u3000x", "\u2028", "a\u2028b",
        " \u2028", "\x85", "a\x85b", " \x85", "!!\x85", "!!\u2028",
        "e\u0301", "e\u0301\u0301", " \u0301\u0301", "\u0301\u0301!", "a\u20dd\u20dd",
        "😀", "😀😀", " 😀😀", "👍🏽", "a😀b", "🇺🇸🇬🇧", "1😀2",
        "Hello world, this is one line without digits or double punctuation.\n",
        "First line.\nSecond line.\n\nThird line, after a blank one.\n",
        "Тест: русский текст, два слова.\n日本語のテキスト。中文文本，标点。\nعربي نص، وكلمات.\n",
        "mixed Latin中文русский123عربي!!  end",
        "def f(x):\n    return x ** 2  # square\n",
        "    indented\n        more\n",
        "trailing spaces   \nnext",
        "x" * 40 + " " * 5 + "y" * 40,
        "",
    ]
    return out


def hf_pattern_cases():
    """Cases aimed at the llama3, qwen2 and deepseek_v3 splits: digit runs of every length (\\p{N}
    against \\p{N}{1,3}, and DeepSeek's first split), whitespace runs before words and line breaks
    (\\s*[\\r\\n]+ before \\s+(?!\\S), no \\s++$), contractions, ASCII punctuation before ASCII and
    other letters (DeepSeek's first alternative), punctuation and symbols (\\p{P}, \\p{S}) with
    and without a leading space and trailing CR/LF, the CJK ranges of DeepSeek's second split
    (their edges, the punctuation and symbols inside them, unassigned code points), characters
    no alternative of DeepSeek's third split matches (controls, format characters, private use,
    noncharacters) alone and before letters, combining marks."""
    out = ["1" * n for n in range(1, 11)] + ["a" + "7" * n + "b" for n in range(1, 8)]
    out += ["\u0663" * 4, "\u00b9\u00b2\u00b3\u2074", "\u2160\u2161x", "12\u4e0034", "ab12cd345ef6789"]
    for n in range(1, 5):
        sp = " " * n
        out += ["a" + sp + "b", "a" + sp, "a" + sp + "\n", "a" + sp + "\nb", "a" + sp + "\r\n" + sp + "b",
                "a\n" + sp, "a" + sp + "\n\n" + sp, "a" + sp + "!!", "a" + sp + "1", "a" + sp + "\xa0b",
                "a" + sp + "\u3000b", "a" + sp + "\u3000\u65e5", sp + "\u65e5\u672c", "\u65e5" + sp + "\u672c"]
    out += [
        "it's", "IT'S", "it'S", "we'll", "WE'LL", "they're", "I've", "I'm", "he'd", "'s", "'\u017f", "x'\u017ft",
        "''s", "' s", "don't", "o'clock", "'re'", "a'b'c",
        "#include", "(foo)", "[bar]", "{baz}", "@user", "$var", "%x", "&amp;", "*ptr", "+plus", "-minus",
        ".dot", "/path/to", ":key", ";x", "<tag>", "=eq", ">gt", "?q", "\\esc", "^hat", "_under", "`tick`",
        "|pipe", "~tilde", "!bang", "\"quote\"", "'single'", ",comma",
        "#caf\u00e9", "#\u00e9t\u00e9", "(\u00e9)", "\u00ab\u00e9\u00bb", "\u00bfQu\u00e9?", "\u2014dash", "\u20ac5",
        "\u00a9x", " #x", " (x)", " !!", "!!\n", "!!\r\n\r\n", " ?!\n", "x!\ny", "a \u2014 b", " \u00a9\n",
        "\u4e00", "\u9fa5", "\u9fa6", "\u9fff", "\u4dff", "\u3040", "\u3041", "\u309f", "\u30a0", "\u30ff", "\u3100",
        "\u3099\u309a", "\u304b\u3099", "\u309b\u309c", "\u30fb", "\u30fc", "\u30a2\u30fb\u30a4",
        "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8", "\u65e5\u672c\u8a9e\u3002", "\u300c\u65e5\u672c\u300d",
        "\u6771\u4eac\u30b9\u30ab\u30a4\u30c4\u30ea\u30fc\u306f634\u30e1\u30fc\u30c8\u30eb\u3002",
        "\u4e2d\u6587abc\u4e2d\u6587", "a\u65e5b", " \u65e5", "\u65e5 ", "\u3000\u65e5", "\uff08\u65e5\uff09",
        "\u0e44\u0e17\u0e22", "\ud55c\uad6d\uc5b4", "\u4e00\uac00", "\u3400\u4e00", "\U00020000\u4e00",
        "\x01", "\x01\x01", "\x01a", "a\x01", "a\x01b", " \x01", "\x01 ", "\x01!", "\x01\u0301", "\x01\u65e5",
        "\u200b", "\u200bx", "x\u200by", "\ufeff", "\ufeffx", "\u00ad", "a\u00adb",
        "\ue000", "\ue000a", "a\ue000", "\U000f0000\U000f0001", "\ufdd0", "\uffff", "\U0010ffff",
        "\u0301", "\u0301a", "a\u0301", " \u0301", "\u0301\u0301!", "e\u0301\u0301 x", "\u0915\u094d\u0937",
        "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u05e9\u05c1\u05dc\u05d5\u05b9\u05dd",
        "\U0001f600", " \U0001f600\U0001f600", "\U0001f44d\U0001f3fd", "a\U0001f600b",
        "\t\t", " \t", "\t ", "a\tb", "a \t b", "\v\f", "a\x85b", "a\u2028b", " \u2029", "\r", "\r\r\n", "\n\r",
        "x   \n   ", "x\n\n\n", "  leading", "trailing  ", "  \n  \n  ", "a  \r\n\r\n  b",
        "def f(x):\n    return x ** 2  # square\n",
        "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}\n",
        "print(\"Hello, world!\")  # 2024-01-01\n",
        "http://example.com/path?q=1&r=2#frag",
        "Mixed Latin\u4e2d\u6587\u0440\u0443\u0441\u0441\u043a\u0438\u0439123\u0639\u0631\u0628\u064a!!  end",
        "",
    ]
    return out


def mixed_case_cases():
    return [
        "camelCase", "CamelCase", "HTTPServer", "XMLHttpRequest", "getHTTPResponseCode",
        "iPhone", "McDonald", "ǅemal", "ǄEMAL", "ǆemal", "Džemal", "ᾈδης", "ʰello", "aʰb", "Aʰ",
        "ʰA", "ªb", "ℵ₀", "Ae\u0301B", "E\u0301COLE", "ABC\u0301def", "a\u0301\u0301\u0301",
        "\u0301\u0301", "The_Quick_Brown", "snake_case_name", "SCREAMING_CASE", "kebab-case-name",
        "HELLOworld", "helloWORLD", "ΑβΓδ", "ПриВЕТ", "ABC123def", "a1B2c3", "ß SS ẞ",
        "ǅǅǅ", "aǅb", "AǅB", "ᾈᾈ", "ーー", "々々", "AーB", "aー", "中ab", "ab中", "Ab中Cd",
        "xʰʰy", "ABCʰdef", "ℵℵ", "AℵB", "aℵb", "U\u0308ber", "u\u0308ber", "A\u0308\u0301",
        "\u1c89\u1c8a\u1c8a", "\U00010d50\U00010d70\U00010d70", "OpenAI's GPT-4o", "XMLParser's",
        "ABC's", "abc'S", "ABC'S", "mIxEd CaSe WoRdS",
    ]


def combining_mark_cases():
    return [
        "\u0301", "\u0301a", " \u0301", " \u0301a", "  \u0301a", "a \u0301 b", "\n\u0301",
        "\t\u0301x", "1 \u0301", "! \u0301", "\u0301 \u0301", "\u20dd", " \u20dd", "\u093e",
        " \u093e", "\u0301\u0302\u0303abc", " \u0301\u0302", "a\u0301 \u0301b", "1\u0301a",
        "\u0301123", "\u0301!", "'\u0301", "\u0301's", "\U000e0100x", " \ufe0fx",
    ]


def script_family_cases():
    return [
        # Latin, precomposed and decomposed
        "Café déjà vu, naïve façade; Ærøskøbing, Łódź, İstanbul, straße",
        "Cafe\u0301 de\u0301ja\u0300 vu, nai\u0308ve fac\u0327ade; Ło\u0301dz\u0301",
        "Tiếng Việt có dấu", "Tie\u0302\u0301ng Vie\u0323\u0302t co\u0301 da\u0302\u0301u",
        "ẹ̀ ọ́ Yorùbá", "Ångström Å A\u030a",
        # Greek, monotonic and polytonic
        "Καλημέρα κόσμε", "Ἐν ἀρχῇ ἦν ὁ λόγος", "ΑΘΗΝΑ ὁδός", "α\u0313\u0301ν", "ᾼ ᾳ ῼ",
        # Cyrillic
        "Привет, мир! Ёлка и йод", "СССР", "Україна ґ є ї", "мо\u0301ре",
        # Arabic with harakat, tatweel and Arabic punctuation
        "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ", "مرحبا بالعالم", "عـــربي", "هل أنت بخير؟ نعم، شكرا",
        # Hebrew with niqqud and cantillation
        "בְּרֵאשִׁית בָּרָא אֱלֹהִים", "שלום עולם", "בְּרֵאשִׁ֖ית",
        # Devanagari with virama, matras and nukta
        "नमस्ते दुनिया", "हिन्दी", "क्षत्रिय", "प्रेम", "ज़िंदगी।", "कि\u094d",
        # Thai
        "สวัสดีครับ ภาษาไทย", "กรุงเทพมหานคร", "ภาษา ไทย ๑๒๓",
        # Han
        "中文", "漢字", "你好，世界！", "北京市朝阳区", "\U00020000\U00020001",
        # kana
        "ひらがな", "カタカナ", "コーヒー", "ﾊﾝｶｸ", "か\u3099", "ラーメン",
        # Hangul, precomposed and conjoining jamo
        "안녕하세요 세계", "\u1100\u1161\u11a8", "한국어 123",
        # emoji: ZWJ sequences, skin tones, flags, keycaps
        "\U0001f44d", "\U0001f44d\U0001f3fd",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
        "\U0001f3f3\ufe0f\u200d\U0001f308", "\u2764\ufe0f", "\U0001f1ef\U0001f1f5\U0001f1fa\U0001f1f8",
        "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", "1\ufe0f\u20e3",
        "a\U0001f44db", " \U0001f44d ", "hello \U0001f44b\U0001f3fc world",
        "\U0001f469\U0001f3fd\u200d\U0001f4bb!", "\U0001f600\U0001f600\U0001f600",
        # other scripts
        "ქართული ენა", "Հայերեն", "አማርኛ", "བོད་ཡིག", "ភាសាខ្មែរ", "မြန်မာစာ", "ພາສາລາວ",
    ]


def astral_and_unassigned_cases():
    return [
        "\U0001d400", "\U0001d400\U0001d401\U0001d402", "\U0001d41a\U0001d41b",
        "\U0001d400\U0001d41b\U0001d41c", " \U0001d400", "a\U00020000", "\U0001f600", " \U0001f600",
        "\U0001d7ce\U0001d7cf\U0001d7d0\U0001d7d1", "\U00010348", "\U00013000", "\U0001f004",
        "\u0378", "a\u0378b", " \u0378", "\U000e0080", "\ue000", "a\ue000", " \ue000\ue000",
        "\U0010fffd", "\uffff", "\ufdd0", "\U00010940 \U00011db0", "x\U00016ea0y",
        "\U000323b0\U000323b0", "\u0897\u0897", " \u0897", "\U00010d40\U00010d41\U00010d42\U00010d43",
        "\U0001ccf0\U0001ccf1\U0001ccf2\U0001ccf3", "\ue000abc", "abc\U0010fffd", "1\U000e0080",
    ]


def general_text_cases():
    return [
        "Hello, world!", "The quick brown fox jumps over the lazy dog.",
        "  leading spaces", "trailing spaces   ", "\n\nleading newlines", "trailing newlines\n\n",
        "def f(x):\n    return x + 1\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}\n",
        "# Title\n\n- item 1\n- item 2\n", "key: value\nother: 42\n",
        "SELECT * FROM t WHERE id = 42;", "C:\\Program Files\\app.exe", "~/.config/app/rc",
        "The year 1984 had 365 days; 2024 had 366.", "Mr. O'Neil's 3rd-floor office (room 12B).",
    ]


def script_aware_cases():
    return [
        "德国HYDAC电磁球阀", "中文English混合テキストです。", "日本語のテキスト、カタカナとひらがな。",
        "ภาษาไทย เป็น ภาษา ที่ สวยงาม", "สวัสดีครับ 123 ครับ", "don't 你好, world", "你好, world's 世界",
        "  ...中文", "「中文」", "(hello) 世界!!  ", "123中文456", "!!abc中文??", "中文 abc 。",
        "\u0301中文", "\u0301abc", " \u0301中", "123 !!", "", "   ", "!!\n/\n", "\U0001f600\U0001f44d",
        "\u0301\u0301", "\u0378", "abc\u0301中\u0301文", "中a\u0301", "中\u0301a", "a中\u0301",
        "ก\u0301abc", "abcก\u0e31", "コーヒー", "ひらがなー", "ラーメン", "Привет мир 中文 русский",
        "αβγ中文δεζ", "한국어와 中文 그리고 日本語", "Hello世界Hello", "世界Hello世界", "x世y界z",
        "abc 中 def 文 ghi", "東京スカイツリーは634メートル。", "第12345章", "２０２４年", "中文\n\nabc",
        "abc\r\n中文", "中文  \n  ", "中文\u3000文字", "中文\U0001f600abc", "abc\U0001f600中文",
        "中文's", "abc's中文's", "中文!!\n/\n", "中文 ...//\r\n", "私は学生です", "안녕하세요 世界",
        "alpha αλφα beta βήτα", "हिन्दी Hindi text", "مرحبا hello مرحبا", "\U00020000\U00020001abc",
        "ᾈδης and Ἀθῆναι", "中\u200b文", "中\ufeffabc", "中文 123 456 中文", "中 中  中\n中",
        "漢字\u3099", "中\U000e0100文", "中文\u2028abc", "あ'sい", "中文'S'T", "中1234567文",
        "ǅ中ʰ文ª", "𝐀中𝟎", "中\u0378文", "中\ue000文",
    ]


SA_CUSTOM_CASES = [
    "德国HYDAC电磁球阀", "中文English混合テキストです。", "日本語のテキスト、カタカナとひらがな。",
    "ภาษาไทย เป็น ภาษา ที่ สวยงาม", "don't 你好, world", "  ...中文", "123 !!", "", "\u0301中文",
    "abc\u0301中\u0301文", "Привет мир 中文 русский", "αβγ中文δεζ", "alpha αλφα beta βήτα",
    "ᾈδης and Ἀθῆναι", "Hello世界Hello", "世界Hello世界", "x世y界z", "Café déjà vu, naïve façade",
    "Cafe\u0301 de\u0301ja\u0300 vu", "Ἐν ἀρχῇ ἦν ὁ λόγος", "HTTPServer's camelCase", "IT'S 中文'S",
    "a \u0301 b", "中文!!\n/\n", "中文 ...//\r\n", "123中文456", "私は学生です", "한국어와 中文",
    "1234567 αβγ 89", "ΑΘΗΝΑ\u2028ΑΘΗΝΑ", "x\u3000\u3000y", "ǅemal ᾈδης",
]

# UDHR texts used besides the first text of each dominant script.
UDHR_EXTRA = ("ell_polytonic", "vie", "yor", "kor", "cmn_hant")
UDHR_SCRIPT_AWARE_SCRIPTS = {"Han", "Hiragana", "Katakana", "Thai", "Myanmar", "Khmer", "Lao",
                             "Hangul", "Latin", "Greek"}
UDHR_MIN_LINE = 30
UDHR_MAX_LINE = 400


def udhr_lines():
    """[(code, dominant script, line)]: for each dominant script (`scripts[0]`), the first
    record in file order with it, then the UDHR_EXTRA records; from each, its first two lines
    of at least UDHR_MIN_LINE characters, each cut to at most UDHR_MAX_LINE. The selection is
    made by vectors/vendor_udhr.py from ../shared/corpora/udhr.jsonl.xz; this reads its output,
    vectors/texts/udhr.jsonl, so the check runs on a fresh clone."""
    sys.path.insert(0, HERE)
    import vendor_udhr
    assert (UDHR_EXTRA, UDHR_MIN_LINE, UDHR_MAX_LINE) == (
        vendor_udhr.PRE_EXTRA, vendor_udhr.PRE_MIN_LINE, vendor_udhr.PRE_MAX_LINE)
    return vendor_udhr.excerpts("pretokenize")


# ---------------------------------------------------------------------------------------------


def _unique(texts):
    seen, out = set(), []
    for t in texts:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


FIELDS = {
    "pattern": "base pattern: gpt2 (= r50k_base and p50k_base), cl100k (cl100k_base) or "
               "o200k (o200k_base); its pat_str is tiktoken 0.14's",
    "script_aware": "false: regex.findall(pat_str, text); true: docs/design.md §5's script "
                    "chunking first, script-specific pattern for chunks of `scripts`",
    "scripts": "null for the default script set, else the list of script names (Unicode Script "
               "property values) whose chunks use the script-specific pattern",
    "text": "input text (valid Unicode, no surrogates)",
    "pieces": "expected pre-tokens, in order; their concatenation is text",
}


# superbpe.jsonl's fields: the pattern and its split differ
SUPERBPE_FIELDS = dict(FIELDS, pattern="superbpe: SuperBPE's Stage-2 pattern (the header's pat_str), split "
                                       "isolated (the header's split)",
                       script_aware="false: the isolated split of text; true: docs/design.md §5's script "
                                    "chunking first, script-specific pattern (regex.findall) for chunks of "
                                    "`scripts`, the isolated split for the rest")


def build():
    from importlib import import_module
    sys.path.insert(0, HERE)
    oracle = import_module("oracle")

    udhr = udhr_lines()
    base_texts = _unique(
        single_character_cases() + whitespace_cases() + not_whitespace_cases()
        + contraction_cases() + digit_cases() + punctuation_cases() + mixed_case_cases()
        + combining_mark_cases() + astral_and_unassigned_cases() + general_text_cases()
        + script_family_cases() + [t for _, _, t in udhr])
    sa_texts = _unique(script_aware_cases() + script_family_cases())
    sa_udhr = _unique([t for _, s, t in udhr if s in UDHR_SCRIPT_AWARE_SCRIPTS])
    for t in base_texts + sa_texts + SA_CUSTOM_CASES:
        t.encode("utf-8")  # no lone surrogates

    def record(pattern, text, script_aware=False, scripts=None):
        return {"pattern": pattern, "script_aware": script_aware,
                "scripts": None if scripts is None else list(scripts), "text": text,
                "pieces": oracle.pretokenize(text, pattern, script_aware, scripts)}

    udhr_note = ("the last records' texts are lines of the Universal Declaration of Human Rights "
                 "from ../shared/corpora/udhr.jsonl.xz (MIT-licensed collection of public texts): "
                 "for each dominant script the first text in file order, plus %s; from each its "
                 "first two lines of at least %d characters, cut to at most %d"
                 % (", ".join(UDHR_EXTRA), UDHR_MIN_LINE, UDHR_MAX_LINE))
    udhr_codes = sorted({c for c, _, _ in udhr})

    files = {}
    for pattern in PATTERN_NAMES:
        recs = [record(pattern, t) for t in base_texts]
        meta = _meta(pattern + ".jsonl", len(recs), udhr_note, udhr_codes)
        meta["pat_str"] = oracle.PATTERNS[pattern]
        files[pattern + ".jsonl"] = [{"_meta": meta}] + recs

    # superbpe: its own cases and every base text, then its script-aware records (kept here, so
    # script_aware.jsonl, which other generators read, stays as it was)
    sb_texts = _unique(superbpe_cases() + base_texts)
    for t in sb_texts:
        t.encode("utf-8")
    recs = [record("superbpe", t) for t in sb_texts]
    hf_checked = check_superbpe_with_hf(oracle, [(r["text"], r["pieces"]) for r in recs])
    recs += [record("superbpe", t, True) for t in _unique(sa_texts + sb_texts[:80] + sa_udhr)]
    for scripts in CUSTOM_SCRIPTS:
        recs += [record("superbpe", t, True, scripts) for t in SA_CUSTOM_CASES]
    meta = _meta("superbpe.jsonl", len(recs), udhr_note, udhr_codes)
    meta["fields"] = SUPERBPE_FIELDS
    meta["pat_str"] = oracle.PATTERNS["superbpe"]
    meta["split"] = ("isolated (HuggingFace tokenizers' Split behaviour): the matches of pat_str, found left "
                     "to right as regex.finditer finds them, and each nonempty stretch of text between them; "
                     "SuperBPE's Stage-2 pre-tokenizer (github.com/PythonNut/superbpe, extend_tokenizer.sh)")
    meta["hf_check"] = ("the %d records with script_aware false also equal tokenizers==%s's "
                        "pre_tokenizers.Split(Regex(pat_str), \"isolated\").pre_tokenize_str(text)"
                        % (hf_checked, ORACLE_TOKENIZERS))
    meta["script_specific_pat"] = oracle.SCRIPT_SPECIFIC
    meta["default_scripts"] = list(oracle.DEFAULT_SCRIPTS)
    files["superbpe.jsonl"] = [{"_meta": meta}] + recs

    # llama3, qwen2, deepseek_v3: their cases and every base text, then script-aware records
    hf_texts = _unique(hf_pattern_cases() + base_texts)
    for t in hf_texts:
        t.encode("utf-8")
    for pattern in HF_PATTERNS:
        recs = [record(pattern, t) for t in hf_texts]
        hf_checked = check_with_hf(oracle, pattern, [(r["text"], r["pieces"]) for r in recs])
        recs += [record(pattern, t, True) for t in _unique(sa_texts + hf_texts[:60] + sa_udhr)]
        for scripts in CUSTOM_SCRIPTS:
            recs += [record(pattern, t, True, scripts) for t in SA_CUSTOM_CASES]
        meta = _meta(pattern + ".jsonl", len(recs), udhr_note, udhr_codes)
        meta["fields"] = dict(FIELDS, pattern=HF_PATTERN_NOTES[pattern] + "; the header's pat_str%s, split "
                              "isolated (the header's split)" % ("s" if pattern in oracle.SEQUENCES else ""),
                              script_aware=SUPERBPE_FIELDS["script_aware"])
        if pattern in oracle.SEQUENCES:
            meta["pat_strs"] = list(oracle.SEQUENCES[pattern])
            meta["split"] = ("isolated, in sequence (HuggingFace tokenizers' Sequence of Splits): the first regex "
                             "splits the text, each next one every piece the one before gave; a split keeps the "
                             "matches, found left to right as regex.finditer finds them, and each nonempty "
                             "stretch of text between them")
            meta["hf_check"] = ("the %d records with script_aware false also equal tokenizers==%s's "
                                "pre_tokenizers.Sequence([Split(Regex(r), \"isolated\") for r in pat_strs])"
                                ".pre_tokenize_str(text)" % (hf_checked, ORACLE_TOKENIZERS))
        else:
            meta["pat_str"] = oracle.PATTERNS[pattern]
            meta["split"] = ("isolated (HuggingFace tokenizers' Split behaviour): the matches of pat_str, found "
                             "left to right as regex.finditer finds them, and each nonempty stretch of text "
                             "between them (none: the regex matches every character)")
            meta["hf_check"] = ("the %d records with script_aware false also equal tokenizers==%s's "
                                "pre_tokenizers.Split(Regex(pat_str), \"isolated\").pre_tokenize_str(text)"
                                % (hf_checked, ORACLE_TOKENIZERS))
        meta["script_specific_pat"] = oracle.SCRIPT_SPECIFIC
        meta["default_scripts"] = list(oracle.DEFAULT_SCRIPTS)
        files[pattern + ".jsonl"] = [{"_meta": meta}] + recs

    recs = []
    for t in sa_texts:                       # default script set, every pattern
        for pattern in PATTERN_NAMES:
            recs.append(record(pattern, t, True))
    for scripts in CUSTOM_SCRIPTS:           # custom script sets
        for t in SA_CUSTOM_CASES:
            for pattern in PATTERN_NAMES:
                recs.append(record(pattern, t, True, scripts))
    for t in sa_udhr:                        # real text, default script set
        for pattern in PATTERN_NAMES:
            recs.append(record(pattern, t, True))
    meta = _meta("script_aware.jsonl", len(recs), udhr_note,
                 sorted({c for c, s, _ in udhr if s in UDHR_SCRIPT_AWARE_SCRIPTS}))
    meta["script_specific_pat"] = oracle.SCRIPT_SPECIFIC
    meta["default_scripts"] = list(oracle.DEFAULT_SCRIPTS)
    files["script_aware.jsonl"] = [{"_meta": meta}] + recs

    esc = _escaper()
    return {name: "".join(_dump(r, esc) for r in rs) for name, rs in files.items()}


HF_PATTERN_NOTES = {
    "llama3": "llama3: Llama 3's pre-tokenizer (the Split of its tokenizer.json)",
    "qwen2": "qwen2: Qwen 2's and Qwen 3's pre-tokenizer (the Split of their tokenizer.json)",
    "deepseek_v3": "deepseek_v3: DeepSeek V3's pre-tokenizer (the three Splits of its tokenizer.json)",
}


def check_with_hf(oracle, pattern, cases):
    """Assert that HuggingFace tokenizers (the pinned version) splits every case as the oracle
    does, with the pattern's Split (or Sequence of Splits, all isolated); the number checked."""
    have = importlib.metadata.version("tokenizers")
    if have != ORACLE_TOKENIZERS:
        sys.exit("generate.py: needs tokenizers==%s to check the %s vectors, found %s"
                 % (ORACLE_TOKENIZERS, pattern, have))
    from tokenizers import Regex, pre_tokenizers
    regexes = oracle.SEQUENCES.get(pattern, [oracle.PATTERNS[pattern]])
    split = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r), "isolated") for r in regexes])
    for text, pieces in cases:
        got = [p for p, _ in split.pre_tokenize_str(text)]
        assert got == pieces, "tokenizers disagrees with the oracle on %r (%s): %r, oracle %r" % (
            text, pattern, got, pieces)
    return len(cases)


def check_superbpe_with_hf(oracle, cases):
    """Assert that HuggingFace tokenizers (the pinned version: SuperBPE trains with its Split)
    gives every case the oracle's pieces; the number of cases checked."""
    have = importlib.metadata.version("tokenizers")
    if have != ORACLE_TOKENIZERS:
        sys.exit("generate.py: needs tokenizers==%s to check the superbpe vectors, found %s"
                 % (ORACLE_TOKENIZERS, have))
    from tokenizers import Regex, pre_tokenizers
    split = pre_tokenizers.Split(Regex(oracle.PATTERNS["superbpe"]), "isolated")
    for text, pieces in cases:
        got = [p for p, _ in split.pre_tokenize_str(text)]
        assert got == pieces, "tokenizers disagrees with the oracle on %r: %r, oracle %r" % (text, got, pieces)
    return len(cases)


def _meta(name, n, udhr_note, udhr_codes):
    return {
        "generated_by": "python vectors/generate.py",
        "oracle": "regex==" + ORACLE_REGEX,
        "unicode": UNICODE_VERSION,
        "part": "pretokenize",
        "file": name,
        "records": n,
        "fields": FIELDS,
        "sources": "hand-written case texts in vectors/generate.py; " + udhr_note,
        "udhr_codes": udhr_codes,
    }


def main(argv=None):
    check = check_flag(__doc__, argv)

    try:
        have = importlib.metadata.version("regex")
    except importlib.metadata.PackageNotFoundError:
        have = None
    if have != ORACLE_REGEX:
        sys.stderr.write("generate.py: the oracle must be regex==%s (docs/design.md §4), found %s; "
                         "pip install regex==%s\n" % (ORACLE_REGEX, have, ORACLE_REGEX))
        return 2

    return write_or_check(build(), OUT_DIR, "generate.py", check)


if __name__ == "__main__":
    sys.exit(main())
