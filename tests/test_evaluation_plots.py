import os
import random
import subprocess
import sys

import pytest

from supertok.evaluation import plots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def lorenz_gini(values):
    vals = sorted(values)
    n, total = len(vals), sum(vals)
    cum = sum((i + 1) * v for i, v in enumerate(vals))
    return (2 * cum) / (n * total) - (n + 1) / n


def make_data(n_langs=12, labels=("o200k_base", "mine", "other"), seed=7):
    rng = random.Random(seed)
    scripts = {1: "Latin", 2: "Cyrillic", 3: "Han", 4: "Gothic"}
    langs = ["eng"] + ["l%03d" % i for i in range(1, n_langs)]
    languages = {}
    for i, lang in enumerate(langs):
        floor = 1 if lang == "eng" else (i % 4) + 1
        languages[lang] = {"units": 100, "bytes": 5000 * floor, "chars": 5000,
                           "script": scripts[floor], "floor": floor}
    if n_langs > 5:
        languages[langs[5]]["floor"] = None   # one unknown floor
    results = {}
    for k, label in enumerate(labels):
        rows = {}
        prem = {}
        for lang in langs:
            floor = languages[lang]["floor"] or 2
            p = 1.0 if lang == "eng" else round(
                (0.8 + 0.5 * floor) * (1 + 0.3 * k) * rng.uniform(0.8, 1.3), 4)
            prem[lang] = p
            tokens = int(1000 * p * (1 + k))
            rows[lang] = {"tokens": tokens, "mean_tokens": tokens / 100,
                          "premium": p, "tokens_per_byte": 0.2,
                          "tokens_per_char": 0.3, "bytes_per_token": 4.0}
        groups = {}
        for f in (1, 2, 3, 4):
            members = [l for l in langs if languages[l]["floor"] == f]
            if members:
                groups[str(f)] = {
                    "languages": len(members),
                    "mean_tokens": sum(rows[l]["mean_tokens"] for l in members) / len(members),
                    "mean_premium": sum(prem[l] for l in members) / len(members)}
        nonref = [prem[l] for l in langs if l != "eng"]
        results[label] = {"languages": rows, "gini": lorenz_gini(nonref),
                          "variance": 0.1, "theil_t": 0.05, "theil_l": 0.05,
                          "groups": {"floor": groups, "script": {}}}
    comparisons, samples = [], {}
    nrng = random.Random(seed + 1)
    for a, b in [(labels[0], l) for l in labels[1:3]]:
        d = results[a]["gini"] - results[b]["gini"]
        xs = [nrng.gauss(d, 0.02) for _ in range(10000)]
        srt = sorted(xs)
        comparisons.append({"a": a, "b": b, "delta_gini": d,
                            "interval": [srt[250], srt[9749]],
                            "wilcoxon": {"statistic": 3.0, "pvalue": 0.01},
                            "p_holm": 0.02, "p_bh": 0.02,
                            "wins": 8, "ties": 0, "losses": 3})
        samples[(a, b)] = xs
    return {"reference": "eng",
            "tokenizers": [{"label": l} for l in labels],
            "languages": languages, "results": results,
            "comparisons": comparisons}, samples


def check_png(path):
    import matplotlib.image as mpimg
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    img = mpimg.imread(path)
    h, w = img.shape[:2]
    assert abs((w / h) / (8 / 4.5) - 1) < 0.05, (path, w, h)
    return img


def test_lorenz_points_hand_example():
    pts = plots.lorenz_points([1, 1, 2])
    expected = [(0, 0), (1 / 3, 0.25), (2 / 3, 0.5), (1, 1)]
    assert len(pts) == len(expected)
    for (x, y), (ex, ey) in zip(pts, expected):
        assert x == pytest.approx(ex) and y == pytest.approx(ey)
    # order of input does not matter, None is dropped
    assert plots.lorenz_points([2, None, 1, 1]) == pts
    # all equal values lie on the diagonal
    for x, y in plots.lorenz_points([3, 3, 3, 3]):
        assert x == pytest.approx(y)
    assert plots.lorenz_points([]) == [(0.0, 0.0), (1.0, 1.0)]


def test_write_plots_three_tokenizers(tmp_path):
    pytest.importorskip("matplotlib")
    import numpy as np
    data, samples = make_data()
    out = plots.write_plots(data, samples, str(tmp_path))
    names = [n for n, _ in out]
    assert names == ["premium.png", "lorenz.png", "scatter-1.png",
                     "delta-gini-1.png", "scatter-2.png", "delta-gini-2.png",
                     "groups.png"]
    assert sorted(os.listdir(tmp_path)) == sorted(names)
    for _, caption in out:
        assert isinstance(caption, str) and len(caption) > 20
    images = {n: check_png(os.path.join(tmp_path, n)) for n in names}
    # every plot is different from every other
    keys = list(images)
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            a, b = images[keys[i]], images[keys[j]]
            assert a.shape != b.shape or not np.array_equal(a, b), (keys[i], keys[j])
    # and no plot is blank: a good share of non-white pixels
    for n, img in images.items():
        rgb = img[..., :3]
        assert (rgb < 0.9).any(axis=-1).mean() > 0.01, n


def test_one_tokenizer_gives_three_plots(tmp_path):
    pytest.importorskip("matplotlib")
    data, _ = make_data(labels=("only",))
    assert data["comparisons"] == []
    out = plots.write_plots(data, {}, str(tmp_path))
    assert [n for n, _ in out] == ["premium.png", "lorenz.png", "groups.png"]
    for n, _ in out:
        check_png(os.path.join(tmp_path, n))


def test_missing_premium_and_equal_premiums(tmp_path):
    pytest.importorskip("matplotlib")
    data, samples = make_data(labels=("a", "b"))
    for lab in ("a", "b"):
        rows = data["results"][lab]["languages"]
        for lang in rows:
            rows[lang]["premium"] = 1.5
            rows[lang]["mean_tokens"] = 10.0
        rows["l003"]["premium"] = None
        rows["l004"]["mean_tokens"] = None
    data["comparisons"][0]["interval"] = [0.0, 0.0]
    samples = {("a", "b"): [0.0] * 100}
    out = plots.write_plots(data, samples, str(tmp_path))
    assert [n for n, _ in out] == ["premium.png", "lorenz.png", "scatter-1.png",
                                   "delta-gini-1.png", "groups.png"]
    for n, _ in out:
        check_png(os.path.join(tmp_path, n))


def test_many_languages(tmp_path):
    pytest.importorskip("matplotlib")
    data, samples = make_data(n_langs=200)
    out = plots.write_plots(data, samples, str(tmp_path))
    assert len(out) == 7
    check_png(os.path.join(tmp_path, "premium.png"))


def test_import_without_matplotlib():
    code = (
        "import sys\n"
        "for m in [k for k in sys.modules if k.startswith('matplotlib')]:\n"
        "    del sys.modules[m]\n"
        "sys.modules['matplotlib'] = None\n"
        "from supertok.evaluation import plots\n"
        "assert plots.available() is False\n"
        "assert 'matplotlib' in plots.MISSING\n"
        "try:\n"
        "    plots.write_plots({}, {}, '.')\n"
        "except RuntimeError as e:\n"
        "    assert str(e) == plots.MISSING\n"
        "else:\n"
        "    raise AssertionError('no error')\n"
        "print('ok')\n")
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(plots.__file__)))
    env["PYTHONPATH"] = os.path.dirname(here) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_available_false_in_process(monkeypatch):
    import importlib
    import importlib.util
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    mod = importlib.reload(plots)
    try:
        assert mod.available() is False
    finally:
        monkeypatch.undo()
        importlib.reload(plots)
    assert plots.available() is (importlib.util.find_spec("matplotlib") is not None)
