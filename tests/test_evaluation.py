"""supertok.evaluate and `python -m supertok evaluate`: the numbers against independent
computations (tiktoken's token counts, numpy and scipy on the same numbers, hand-made merge
tables), the corpus layouts and their errors, the report files and the command line."""
import gzip
import json
import math
import os
import struct
import subprocess
import sys

import pytest

import supertok
from supertok.evaluation import CorpusError, Report, TokenizerError, evaluate, load_corpus
from supertok.evaluation.tokenizers import Measured

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")


class Fixed(Measured):
    """A tokenizer that gives each unit a chosen number of tokens (ids 0..n-1) and decodes
    them back to the unit, or, with `broken`, drops the last byte of units holding it."""

    def __init__(self, label, counts, broken=None):
        self.label, self.source, self.kind = label, "test", "test"
        self.counts, self.broken = counts, broken
        self.texts = {}

    def encode_many(self, texts, threads):
        out = []
        for t in texts:
            ids = list(range(self.counts[t]))
            self.texts[tuple(ids) + (t,)] = t
            out.append((ids, t))
        return [_Ids(ids, t) for ids, t in out]

    def decode_many(self, batch, threads):
        out = []
        for ids in batch:
            raw = ids.text.encode("utf-8")
            out.append(raw[:-1] if self.broken and self.broken in ids.text else raw)
        return out

    def vocabulary(self):
        return 100, [50, 51], {50: 1, 51: 2}


class _Ids(list):
    def __init__(self, ids, text):
        super().__init__(ids)
        self.text = text


def _mapping():
    # unit texts name their token counts; eng is the reference
    return {"eng": ["e1", "e2"], "fra": ["f1", "f2"], "rus": ["r1", "r2"], "cmn": ["c1", "c2"]}


COUNTS_A = {"e1": 10, "e2": 20, "f1": 12, "f2": 24, "r1": 20, "r2": 30, "c1": 40, "c2": 50}
COUNTS_B = {"e1": 10, "e2": 20, "f1": 11, "f2": 22, "r1": 15, "r2": 18, "c1": 20, "c2": 25}


def test_premiums_and_dispersion_against_numpy():
    np = pytest.importorskip("numpy")
    r = evaluate(_mapping(), [Fixed("a", COUNTS_A), Fixed("b", COUNTS_B)], bootstrap=500, seed=3)
    # means: eng 15, fra 18, rus 25, cmn 45 (a)
    assert r.mean_tokens["a"] == {"eng": 15.0, "fra": 18.0, "rus": 25.0, "cmn": 45.0}
    assert r.premium["a"]["fra"] == pytest.approx(18 / 15) and r.premium["a"]["eng"] == 1.0
    for lab in ("a", "b"):
        p = np.array([r.premium[lab][lang] for lang in ("fra", "rus", "cmn")])
        g = np.abs(p[:, None] - p[None, :]).sum() / (2 * len(p) ** 2 * p.mean())
        assert r.gini[lab] == pytest.approx(g, rel=1e-12)
        assert r.variance[lab] == pytest.approx(np.var(p, ddof=1), rel=1e-12)
        mu = p.mean()
        assert r.theil_t[lab] == pytest.approx(np.mean(p / mu * np.log(p / mu)), rel=1e-12)
        assert r.theil_l[lab] == pytest.approx(np.mean(np.log(mu / p)), rel=1e-12)
    assert r.round_trip["a"]["failed"] == 0


def test_comparison_against_scipy_and_bootstrap_by_seed():
    scipy_stats = pytest.importorskip("scipy.stats")
    toks = [Fixed("a", COUNTS_A), Fixed("b", COUNTS_B)]
    r = evaluate(_mapping(), toks, bootstrap=2000, seed=7)
    c = r.compare("a", "b")
    assert c.delta_gini == pytest.approx(r.gini["a"] - r.gini["b"])
    langs = ["eng", "fra", "rus", "cmn"]
    ma = [r.mean_tokens["a"][x] for x in langs]
    mb = [r.mean_tokens["b"][x] for x in langs]
    w = scipy_stats.wilcoxon(ma, mb)
    assert c.wilcoxon["statistic"] == w.statistic
    assert c.wilcoxon["pvalue"] == pytest.approx(w.pvalue, rel=1e-12)
    assert (c.wins, c.ties, c.losses) == (0, 1, 3)
    lo, hi = c.interval
    assert lo <= hi
    # the same seed gives the same resamples, another seed others (3 languages: the interval
    # itself takes few values)
    again = evaluate(_mapping(), toks, bootstrap=2000, seed=7)
    assert again.compare("a", "b").interval == c.interval
    assert again.delta_samples[("a", "b")] == r.delta_samples[("a", "b")]
    assert evaluate(_mapping(), toks, bootstrap=2000, seed=8).delta_samples[("a", "b")] != r.delta_samples[("a", "b")]
    # read the other way round
    s = r.compare("b", "a")
    assert s.delta_gini == -c.delta_gini and s.interval == [-hi, -lo] and (s.wins, s.losses) == (3, 0)
    with pytest.raises(KeyError, match="no tokenizer labelled"):
        r.compare("a", "zz")


def test_holm_and_bh_across_the_run():
    toks = [Fixed("a", COUNTS_A), Fixed("b", COUNTS_B), Fixed("c", {k: v + 1 for k, v in COUNTS_B.items()})]
    r = evaluate(_mapping(), toks, bootstrap=0)
    ps = [c.wilcoxon["pvalue"] for c in r.comparisons]
    assert len(ps) == 3 and all(c.interval is None for c in r.comparisons)
    order = sorted(range(3), key=ps.__getitem__)
    holm, run = [0.0] * 3, 0.0
    for k, i in enumerate(order):  # Holm: (m - k) p, running maximum, at most 1
        run = max(run, min(1.0, (3 - k) * ps[i]))
        holm[i] = run
    assert [c.p_holm for c in r.comparisons] == pytest.approx(holm)
    bh, run = [0.0] * 3, 1.0
    for k in range(2, -1, -1):  # BH: p m / rank, running minimum from the largest
        i = order[k]
        run = min(run, ps[i] * 3 / (k + 1))
        bh[i] = run
    assert [c.p_bh for c in r.comparisons] == pytest.approx(bh)


def test_one_tokenizer_has_no_comparison():
    r = evaluate(_mapping(), [Fixed("a", COUNTS_A)], bootstrap=100)
    assert r.comparisons == [] and r.gini["a"] > 0


def test_round_trip_failures_are_listed():
    r = evaluate(_mapping(), [Fixed("a", COUNTS_A, broken="r")], bootstrap=0)
    rt = r.round_trip["a"]
    assert rt["failed"] == 2 and rt["units"] == 8
    assert {(f["lang"], f["unit"]) for f in rt["failures"]} == {("rus", 0), ("rus", 1)}
    assert rt["failures"][0]["byte"] == 1


def test_the_audit_finds_a_unit_that_decodes_wrong(monkeypatch):
    """The one-decode-per-chunk audit of supertok's tokenizers, with the decoder made to lose
    every "x": exactly the units holding one fail, on one thread and on several."""
    from supertok.encoding import Encoding
    real = Encoding._decode_packed
    monkeypatch.setattr(Encoding, "_decode_packed", lambda self, p: real(self, p).replace(b"x", b""))
    corpus = {"eng": ["plain", "with x", "more", "x again", "end"], "deu": ["a", "b", "c", "d", "x"]}
    for threads in (1, 2, 3):
        r = evaluate(corpus, ["o200k_base"], bootstrap=0, threads=threads)
        rt = r.round_trip["o200k_base"]
        assert rt["failed"] == 3
        assert [(f["lang"], f["unit"]) for f in rt["failures"]] == [("eng", 1), ("eng", 3), ("deu", 4)]
        assert [(f["byte"], f["expected"], f["got"]) for f in rt["failures"]] == [
            (5, "with x", "with "), (0, "x again", " again"), (0, "x", "")]


def test_vocabulary_use_and_merge_depth():
    # rules: 256 = a+b, 257 = (ab)+c, 258 = d+e, 259 = (abc)+(abc)
    model = {"format": "supertok-merges", "version": 1, "name": "tiny", "alphabet": "bytes", "pattern": "o200k",
             "merges": [[97, 98], [256, 99], [100, 101], [257, 257]]}
    enc = supertok.load_model(model)
    r = evaluate({"eng": ["abc abc"], "xxx": ["abcabc ab"]}, [enc], reference="eng", bootstrap=0)
    v = r.vocabulary["tiny"]
    used = {t for text in ("abc abc", "abcabc ab") for t in enc.encode_ordinary(text)}
    assert v["used"] == len(used) and v["ordinary"] == 260
    assert v["merges"] == 4 and v["dead_merges"] == len({256, 257, 258, 259} - used)
    assert v["depth_histogram"] == {"1": 2, "2": 1, "3": 1}
    assert v["active_utilization"] == pytest.approx(len(used) / 260)


@pytest.fixture(scope="module")
def tks(tmp_path_factory):
    """tiktoken, the oracle, offline (the test extra pins it: missing, the run fails)."""
    from generate_encode import tiktoken_offline
    return tiktoken_offline(str(tmp_path_factory.mktemp("tiktoken-cache")))


def test_sample_with_o200k_matches_tiktoken_counts(tks):
    ref = tks["o200k_base"]
    corpus = load_corpus(None)
    assert corpus.aligned and len(corpus.languages) == 52 and len(corpus.ids) == 30
    r = evaluate(None, ["o200k_base"], bootstrap=0)
    for lang in corpus.languages:
        n = sum(len(ref.encode_ordinary(u)) for u in corpus.units[lang])
        assert r.mean_tokens["o200k_base"][lang] == n / 30, lang
    assert r.round_trip["o200k_base"]["failed"] == 0
    facts = r.data["languages"]
    assert (facts["eng"]["script"], facts["eng"]["floor"]) == ("Latin", 1)
    assert (facts["rus"]["script"], facts["rus"]["floor"]) == ("Cyrillic", 2)
    assert (facts["cmn_hans"]["script"], facts["cmn_hans"]["floor"]) == ("Han", 3)
    assert (facts["ccp"]["script"], facts["ccp"]["floor"]) == ("Chakma", 4)


def test_report_files_and_reload(tmp_path):
    r = evaluate(_mapping(), [Fixed("a", COUNTS_A), Fixed("b", COUNTS_B)], bootstrap=200)
    written = r.save(tmp_path / "rep")
    names = sorted(os.path.basename(p) for p in written)
    assert {"report.json", "report.md", "report.html"} <= set(names)
    back = Report.load(tmp_path / "rep" / "report.json")
    assert back.gini == r.gini and back.compare("a", "b") == r.compare("a", "b")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "| a | %.4f |" % r.gini["a"] in md
    from supertok.evaluation import plots
    if plots.available():
        assert {"premium.png", "lorenz.png", "groups.png", "scatter-1.png", "delta-gini-1.png"} <= set(names)
    else:
        assert plots.MISSING in md


def test_to_pandas():
    pytest.importorskip("pandas")
    r = evaluate(_mapping(), [Fixed("a", COUNTS_A)], bootstrap=0)
    df = r.to_pandas()
    assert len(df) == 4 and set(df["lang"]) == {"eng", "fra", "rus", "cmn"}
    assert float(df[df["lang"] == "rus"]["premium"].iloc[0]) == pytest.approx(25 / 15)


@pytest.mark.parametrize("name", ["o200k_base", "ube"])
def test_packed_ids_on_every_backend(backend, name):
    """The evaluation's path (ids as packed bytes from the core, decoded from packed bytes)
    gives the lists' ids and decode on every backend, bytes and UBE models."""
    if name == "ube":
        enc = supertok.load_model({"format": "supertok-merges", "version": 1, "name": "u", "alphabet": "ube",
                                   "pattern": "o200k", "merges": [[104, 101], [512, 108], [228, 256]]})
    else:
        enc = supertok.get_encoding(name)
    texts = ["hello world", "", "Добрый день", "人人生而自由,在尊严和权利上一律平等。", "a\u0000b", "🙂 ok"]
    datas = [t.encode("utf-8") for t in texts]
    packed, counts = enc._encode_ordinary_packed(datas, 2)
    lists = enc.encode_ordinary_batch(texts)
    assert counts == [len(ids) for ids in lists]
    assert packed == b"".join(struct.pack("<%dI" % len(ids), *ids) for ids in lists)
    assert enc._decode_packed(packed) == "".join(texts).encode("utf-8")
    assert enc._decode_packed(b"") == b""


@pytest.mark.skipif(not os.path.exists(os.path.join(CORPORA, "udhr.jsonl.xz")),
                    reason="corpus udhr.jsonl.xz is absent (../shared/corpora, or set SUPERTOK_CORPORA)")
def test_fairness_bench_runs(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "fairness.py"), "--quick", "--corpora", CORPORA],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "py")))
    assert p.returncode == 0, p.stderr
    assert "| 1024 |" in p.stdout and "ΔGini" in p.stdout


# ---- corpora ------------------------------------------------------------------------------

def _write_jsonl(path, records, opener=open):
    with opener(path, "wt", encoding="utf-8") as f:
        for rec in records:
            f.write((rec if isinstance(rec, str) else json.dumps(rec)) + "\n")


def test_aligned_jsonl_keeps_common_ids(tmp_path):
    p = tmp_path / "c.jsonl.gz"
    _write_jsonl(p, [{"lang": "eng", "id": 1, "text": "a"}, {"lang": "eng", "id": 2, "text": "b"},
                     {"lang": "deu", "id": 2, "text": "c"}, {"lang": "deu", "id": 1, "text": "d"},
                     {"lang": "deu", "id": 3, "text": "e"}], gzip.open)
    c = load_corpus(str(p))
    assert c.ids == [1, 2] and c.units == {"eng": ["a", "b"], "deu": ["d", "c"]}
    assert c.dropped == 1 and "missing from 1 language" in c.dropped_why


@pytest.mark.parametrize("records, message", [
    ([{"lang": "eng", "id": 1, "text": "a"}, {"lang": "eng", "id": 1, "text": "b"}], r":2: the unit 1 of 'eng' appears twice"),
    (['{"lang": "eng", "id": 1, "text": "\\ud800"}'], r":1: the text holds a lone surrogate \(U\+D800"),
    (['{"lang": "eng", "id": 1, "text": 5}'], r":1: the field 'text' is a int"),
    (['{"lang": "eng", "id": 1'], r":1: not a JSON record"),
    (['{"foo": 1}'], r":1: a record of an aligned corpus has"),
    ([{"lang": "eng", "id": 1, "text": "a"}, {"lang": "deu", "id": 2, "text": "b"}], "no unit id is present in every"),
])
def test_jsonl_errors_name_the_line(tmp_path, records, message):
    p = tmp_path / "bad.jsonl"
    _write_jsonl(p, records)
    with pytest.raises(CorpusError, match=message):
        load_corpus(str(p))


def test_invalid_utf8_names_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"lang": "eng", "id": 1, "text": "a"}\n{"lang": "eng", "id": 2, "text": "\xff"}\n')
    with pytest.raises(CorpusError, match=r"bad.jsonl:2: not UTF-8"):
        load_corpus(str(p))


def test_flores_folder(tmp_path):
    d = tmp_path / "flores"
    d.mkdir()
    (d / "eng_Latn.devtest").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (d / "rus_Cyrl.devtest").write_text("один\nдва\n", encoding="utf-8")
    c = load_corpus(str(d))
    assert c.aligned and c.units == {"eng_Latn": ["one", "two"], "rus_Cyrl": ["один", "два"]}
    assert c.dropped == 1 and "rus_Cyrl has 2" in c.dropped_why
    r = evaluate(str(d), ["o200k_base"], bootstrap=0)  # the reference "eng" names eng_Latn
    assert r.reference == "eng_Latn"
    (d / "eng_Latn.dev").write_text("x\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"several splits \(dev, devtest\)"):
        load_corpus(str(d))
    assert load_corpus(str(d), split="dev").languages == ["eng_Latn"]


def test_udhr_layout_is_not_aligned(tmp_path):
    p = tmp_path / "udhr.jsonl.xz"
    import lzma
    _write_jsonl(p, [{"code": "eng", "text": "A b.\n\nC d e.\n"}, {"code": "deu", "text": "X.\nY z.\n \nW.\n"}], lzma.open)
    c = load_corpus(str(p))
    assert not c.aligned and c.units == {"eng": ["A b.", "C d e."], "deu": ["X.", "Y z.", "W."]}
    r = evaluate(str(p), ["o200k_base"], bootstrap=0)
    assert "not aligned" in r.data["corpus"]["note"]


def test_bad_arguments():
    with pytest.raises(CorpusError, match="the reference language 'xx' is not in the corpus"):
        evaluate(_mapping(), [Fixed("a", COUNTS_A)], reference="xx")
    with pytest.raises(ValueError, match="two tokenizers have the label 'a'"):
        evaluate(_mapping(), [Fixed("a", COUNTS_A), Fixed("a", COUNTS_B)])
    with pytest.raises(TokenizerError, match="neither a shipped encoding"):
        evaluate(_mapping(), ["no_such_encoding"])
    with pytest.raises(ValueError, match="bootstrap is a number"):
        evaluate(_mapping(), [Fixed("a", COUNTS_A)], bootstrap=-1)
    with pytest.raises(CorpusError, match="the reference language eng has no token"):
        evaluate({"eng": [""], "deu": ["x"]}, ["o200k_base"])


def test_model_files_rank_files_and_tokenizer_json(tmp_path):
    pytest.importorskip("tokenizers")
    model = {"format": "supertok-merges", "version": 1, "name": "tiny", "alphabet": "bytes", "pattern": "o200k",
             "merges": [[97, 98], [256, 99], [32, 256], [116, 104], [259, 101]]}
    enc = supertok.load_model(model)
    enc.save(str(tmp_path / "tiny.stmodel"))
    enc.export(str(tmp_path / "tiny.json"), "hf", check=False)
    enc.export(str(tmp_path / "tiny.tiktoken"), "tiktoken", check=False)
    corpus = {"eng": ["the abc abd", "abc the"], "deu": ["die abc", "thethe"]}
    r = evaluate(corpus, [str(tmp_path / "tiny.stmodel") + ":model", str(tmp_path / "tiny.json"),
                          str(tmp_path / "tiny.tiktoken") + ":ranks"], bootstrap=0)
    assert r.labels == ["model", "tiny", "ranks"]
    means = [r.mean_tokens[lab] for lab in r.labels]
    assert means[0] == means[1] == means[2]
    assert means[0]["eng"] == sum(len(enc.encode_ordinary(t)) for t in corpus["eng"]) / 2
    assert r.data["tokenizers"][1]["kind"] == "tokenizers"
    assert r.vocabulary[r.labels[1]]["depth_histogram"] == r.vocabulary["model"]["depth_histogram"]


# ---- command line -------------------------------------------------------------------------

def _cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "py"))
    return subprocess.run([sys.executable, "-m", "supertok", "evaluate"] + list(args), capture_output=True,
                          text=True, env=env, timeout=300, **kw)


def test_cli_on_the_sample(tmp_path):
    out = tmp_path / "report"
    p = _cli("--tokenizer", "o200k_base", "--tokenizer", "cl100k_base:cl100k", "--bootstrap", "300", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert "o200k_base - cl100k" in p.stdout and "52 languages, reference eng" in p.stdout
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["bootstrap"] == 300 and [t["label"] for t in data["tokenizers"]] == ["o200k_base", "cl100k"]
    p = _cli("-t", "o200k_base", "--bootstrap", "0", "--json", "--progress", "off")
    assert p.returncode == 0 and p.stderr == ""
    assert json.loads(p.stdout)["results"]["o200k_base"]["gini"] == data["results"]["o200k_base"]["gini"]


@pytest.mark.parametrize("args, message", [
    (["/no/such/corpus"], "supertok: /no/such/corpus: no such file or folder"),
    (["-t", "nope"], "supertok: nope: neither a shipped encoding"),
    (["--compare", "a"], "supertok: --compare: 'a' is not A:B"),
    (["--reference", "zz"], "the reference language 'zz' is not in the corpus"),
])
def test_cli_errors(args, message):
    p = _cli(*args)
    assert p.returncode == 2 and message in p.stderr and p.stdout == ""


def test_cli_output_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("keep")
    p = _cli("-o", str(f))
    assert p.returncode == 2 and "is not a folder" in p.stderr and f.read_text() == "keep"


_NO_UDHR = "corpus udhr.jsonl.xz is absent (../shared/corpora, or set SUPERTOK_CORPORA)"


@pytest.mark.skipif(not os.path.exists(os.path.join(CORPORA, "udhr.jsonl.xz")), reason=_NO_UDHR)
def test_the_shipped_sample_is_the_generators():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_udhr_sample.py"), "--check", "--udhr",
                        os.path.join(CORPORA, "udhr.jsonl.xz")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "up to date" in p.stdout, p.stdout + p.stderr


@pytest.mark.skipif(not os.path.exists(os.path.join(CORPORA, "udhr.jsonl.xz")), reason=_NO_UDHR)
def test_full_udhr_round_trips_and_matches_tiktoken(tks):
    ref = tks["cl100k_base"]
    path = os.path.join(CORPORA, "udhr.jsonl.xz")
    r = evaluate(path, ["cl100k_base"], bootstrap=0)
    c = load_corpus(path)
    assert len(c.languages) == 532
    for lang in c.languages[::25]:
        n = sum(len(ref.encode_ordinary(u)) for u in c.units[lang])
        assert math.isclose(r.mean_tokens["cl100k_base"][lang], n / len(c.units[lang])), lang
    assert r.round_trip["cl100k_base"]["failed"] == 0
