"""Tests for supertok.evaluation.stats: hand fixtures, numpy/scipy oracles, bootstrap contract."""

import itertools
import math
import random

import pytest

from supertok.evaluation import stats as S


# ---------------------------------------------------------------------------
# hand-computed fixtures


def test_gini_hand_values():
    assert S.gini([1, 1, 1, 1]) == 0.0
    # N=4: sum_ij |xi-xj| = 2*3 = 6; 2 N^2 mean = 2*16*0.25 = 8 -> 0.75
    assert S.gini([0, 0, 0, 1]) == 0.75
    # [1,2,3,4]: pairs |diff| (i<j) = 1+2+3+1+2+1 = 10, both orders -> 20;
    # 2 N^2 mean = 2*16*2.5 = 80 -> 20/80 = 0.25.
    # Sorted form: (-3*1 - 1*2 + 1*3 + 3*4) / (4*10) = 10/40 = 0.25.
    assert S.gini([1, 2, 3, 4]) == 0.25
    assert S.gini([4, 3, 1, 2]) == 0.25  # order does not matter
    assert S.gini([7.5]) == 0.0


@pytest.mark.parametrize("bad", [[], [1, -1], [0, 0, 0], [1, float("nan")], [float("inf")]])
def test_gini_rejects(bad):
    with pytest.raises(ValueError):
        S.gini(bad)


def test_variance_hand():
    # mean 2.5; squared deviations 2.25+0.25+0.25+2.25 = 5; 5/(4-1)
    assert S.variance([1, 2, 3, 4]) == pytest.approx(5 / 3, rel=1e-15)
    # a large offset would wreck the naive sum-of-squares formula
    assert S.variance([1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4]) == pytest.approx(5 / 3, rel=1e-12)
    with pytest.raises(ValueError):
        S.variance([1.0])
    with pytest.raises(ValueError):
        S.variance([])


def test_theil_two_point_hand():
    # x = [1, 3]: mu = 2
    # T = (1/2)[(1/2) ln(1/2) + (3/2) ln(3/2)]
    # L = (1/2)[ln(2/1) + ln(2/3)]
    t_expected = 0.5 * (0.5 * math.log(0.5) + 1.5 * math.log(1.5))
    l_expected = 0.5 * (math.log(2.0) + math.log(2.0 / 3.0))
    assert S.theil_t([1, 3]) == pytest.approx(t_expected, rel=1e-14)
    assert S.theil_l([1, 3]) == pytest.approx(l_expected, rel=1e-14)
    assert S.theil_t([5, 5, 5]) == 0.0
    assert S.theil_l([5, 5, 5]) == 0.0


def test_theil_zero_handling():
    # [0, 2]: mu = 1, T = (1/2)[0 + 2 ln 2] = ln 2 (0 ln 0 = 0 convention)
    assert S.theil_t([0, 2]) == pytest.approx(math.log(2.0), rel=1e-15)
    with pytest.raises(ValueError):
        S.theil_l([0, 2])
    with pytest.raises(ValueError):
        S.theil_t([-1, 2])
    with pytest.raises(ValueError):
        S.theil_t([0, 0])
    with pytest.raises(ValueError):
        S.theil_t([])


def test_lorenz_points():
    pts = S.lorenz([3, 1, 4, 2])
    # sorted 1,2,3,4; total 10; cumulative 1,3,6,10
    expected = [(0.0, 0.0), (0.25, 0.1), (0.5, 0.3), (0.75, 0.6), (1.0, 1.0)]
    assert len(pts) == len(expected)
    for (p, v), (ep, ev) in zip(pts, expected):
        assert p == pytest.approx(ep, abs=1e-15)
        assert v == pytest.approx(ev, abs=1e-15)
    # Gini = 1 - 2 * area under the Lorenz curve (trapezoids)
    area = sum((p1 - p0) * (v0 + v1) / 2 for (p0, v0), (p1, v1) in zip(pts, pts[1:]))
    assert 1 - 2 * area == pytest.approx(S.gini([3, 1, 4, 2]), abs=1e-15)


def _brute_wilcoxon_exact_p(d):
    """Two-sided exact p by enumerating all 2^n sign assignments (no ties, no zeros)."""
    n = len(d)
    ranked = sorted(range(n), key=lambda i: abs(d[i]))
    rank = {idx: r + 1 for r, idx in enumerate(ranked)}
    w_obs = sum(rank[i] for i in range(n) if d[i] > 0)
    le = ge = 0
    for signs in itertools.product((0, 1), repeat=n):
        w = sum(rank[i] for i in range(n) if signs[i])
        le += w <= w_obs
        ge += w >= w_obs
    return min(1.0, 2 * min(le, ge) / 2**n)


def test_wilcoxon_exact_n8_bruteforce():
    x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06]
    y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14]
    d = [a - b for a, b in zip(x, y)]
    res = S.wilcoxon(x, y)
    # d = .952, -.147, 1.022, .43, .62, .59, .49, -.08: the two negatives have
    # the smallest |d| (ranks 1 and 2), so W- = 3, W+ = 33, statistic = 3.
    # P(W- <= 3): subsets of {1..8} summing to <= 3 are {}, {1}, {2}, {3},
    # {1,2} -> 5/256, two-sided p = 10/256.
    assert res.statistic == 3.0
    assert res.method == "exact"
    assert res.n == 8 and res.zeros == 0
    assert res.pvalue == _brute_wilcoxon_exact_p(d)
    assert res.pvalue == 10 / 256


def test_wilcoxon_all_zero_and_zeros():
    res = S.wilcoxon([1, 2, 3], [1, 2, 3])
    assert (res.statistic, res.pvalue, res.n, res.method, res.zeros) == (0.0, 1.0, 0, "none", 3)
    res = S.wilcoxon([1, 2, 3, 4], [1, 0, 0, 0])  # d = 0,2,3,4
    assert res.zeros == 1 and res.n == 3
    # zeros present, len <= 13 -> enumeration of signs of the 3 nonzero ranks:
    # W+ = 6 is the max; P(W+ >= 6) = 1/8 -> p = 2/8
    assert res.method == "exact"
    assert res.pvalue == 0.25
    with pytest.raises(ValueError):
        S.wilcoxon([1, 2], [1])
    with pytest.raises(ValueError):
        S.wilcoxon([], [])


def test_holm_bh_hand():
    ps = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005(*4)=0.02, 0.01(*3)=0.03, 0.03(*2)=0.06, 0.04(*1)=0.04 -> running max 0.06
    assert S.holm(ps) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    # BH: sorted 0.005*4/1=0.02, 0.01*4/2=0.02, 0.03*4/3=0.04, 0.04*4/4=0.04 -> running min from top
    assert S.benjamini_hochberg(ps) == pytest.approx([0.02, 0.04, 0.04, 0.02], abs=1e-15)
    assert S.holm([]) == []
    assert S.benjamini_hochberg([]) == []
    assert S.holm([0.3, 0.6]) == [0.6, 0.6]
    assert S.holm([0.9, 0.8]) == [1.0, 1.0]  # capped at 1
    with pytest.raises(ValueError):
        S.holm([1.5])


def test_percentile_hand_and_interval():
    vals = [10.0, 20.0, 30.0, 40.0]
    # virtual index = 3 * q/100
    assert S.percentile(vals, 0) == 10.0
    assert S.percentile(vals, 100) == 40.0
    assert S.percentile(vals, 50) == 25.0  # index 1.5
    assert S.percentile(vals, 25) == pytest.approx(17.5, abs=1e-12)  # index 0.75
    assert S.interval(list(range(101)), 0.9) == (pytest.approx(5.0), pytest.approx(95.0))
    with pytest.raises(ValueError):
        S.percentile(vals, 101)
    with pytest.raises(ValueError):
        S.percentile([], 50)


# ---------------------------------------------------------------------------
# oracles: numpy / scipy


def test_against_numpy_formulas():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(12345)
    for n in [1, 2, 3, 7, 50, 451]:
        x = rng.lognormal(0.0, 0.6, size=n)
        xs = x.tolist()
        g_ref = np.abs(x[:, None] - x[None, :]).sum() / (2 * n * n * x.mean())
        assert S.gini(xs) == pytest.approx(g_ref, rel=1e-12, abs=1e-15)
        mu = x.mean()
        assert S.theil_t(xs) == pytest.approx(np.mean((x / mu) * np.log(x / mu)), rel=1e-10, abs=1e-15)
        assert S.theil_l(xs) == pytest.approx(np.mean(np.log(mu / x)), rel=1e-10, abs=1e-15)
        if n >= 2:
            assert S.variance(xs) == pytest.approx(np.var(x, ddof=1), rel=1e-12)


def test_percentile_matches_numpy_exactly():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    qs = [0, 0.1, 1, 2.5, 5, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 97.5, 99, 99.9, 100]
    qs += rng.uniform(0, 100, size=40).tolist()
    for n in [1, 2, 5, 100, 1001]:
        v = rng.normal(size=n)
        for q in qs:
            assert S.percentile(v.tolist(), q) == float(np.percentile(v, q)), (n, q)
    lo, hi = S.interval(v.tolist(), 0.95)
    assert lo == float(np.percentile(v, 2.5)) and hi == float(np.percentile(v, 97.5))


def _wilcoxon_cases():
    rng = random.Random(2024)
    cases = []
    for n in range(1, 61):
        # continuous: no ties, no zeros (exact for n <= 50, approx above)
        x = [rng.gauss(0.3, 1) for _ in range(n)]
        y = [rng.gauss(0, 1) for _ in range(n)]
        cases.append((x, y))
        # heavy ties and some zeros (integer differences)
        x = [rng.randint(0, 6) for _ in range(n)]
        y = [rng.randint(0, 5) for _ in range(n)]
        cases.append((x, y))
        # ties but no zeros
        d = [rng.choice([-3, -1, 1, 2, 2, 3]) for _ in range(n)]
        cases.append(([float(v) for v in d], [0.0] * n))
        # zeros but no ties
        x = [rng.gauss(0, 1) for _ in range(n)]
        y = [v if rng.random() < 0.2 else rng.gauss(0, 1) for v in x]
        cases.append((x, y))
    return cases


def test_wilcoxon_matches_scipy():
    pytest.importorskip("numpy")
    scipy_stats = pytest.importorskip("scipy.stats")
    import warnings

    methods = set()
    for x, y in _wilcoxon_cases():
        res = S.wilcoxon(x, y)
        if res.method == "none":
            assert all(a == b for a, b in zip(x, y))
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = scipy_stats.wilcoxon(x, y)
        tied = len({abs(a - b) for a, b in zip(x, y) if a != b}) < res.n
        methods.add((res.method, len(x) > 50, tied or res.zeros > 0))
        assert res.statistic == float(ref.statistic), (x, y)
        assert res.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12, abs=0), (x, y, res)
        assert res.n + res.zeros == len(x)
    # all regimes were exercised
    # (exact, no ties), (exact by sign enumeration with ties/zeros, n <= 13),
    # (approx with ties/zeros, 14..50) and (approx, n > 50)
    assert {
        ("exact", False, False),
        ("exact", False, True),
        ("approx", False, True),
        ("approx", True, False),
        ("approx", True, True),
    } <= methods


def test_wilcoxon_method_rules():
    # no ties/zeros and n <= 50 -> exact; n = 51 -> approx
    assert S.wilcoxon(list(range(1, 51)), [0] * 50).method == "exact"
    assert S.wilcoxon(list(range(1, 52)), [0] * 51).method == "approx"
    # a single zero at n = 14 switches to approx (scipy counts pairs before dropping zeros)
    x = list(range(1, 15))
    y = [0] * 13 + [14]
    res = S.wilcoxon(x, y)
    assert res.zeros == 1 and res.n == 13 and res.method == "approx"


def test_bh_matches_scipy_and_holm_matches_direct():
    np = pytest.importorskip("numpy")
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(99)
    for m in [2, 3, 10, 57]:
        ps = rng.uniform(0, 1, size=m) ** 3
        ps[0] = ps[-1]  # include a tie
        bh_ref = scipy_stats.false_discovery_control(ps, method="bh")
        assert S.benjamini_hochberg(ps.tolist()) == pytest.approx(bh_ref.tolist(), rel=1e-15, abs=0)

        # direct Holm: adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j))
        order = np.argsort(ps, kind="stable")
        sorted_ps = ps[order]
        step = np.minimum(1.0, (m - np.arange(m)) * sorted_ps)
        adj_sorted = np.maximum.accumulate(step)
        holm_ref = np.empty(m)
        holm_ref[order] = adj_sorted
        assert S.holm(ps.tolist()) == pytest.approx(holm_ref.tolist(), rel=1e-15, abs=0)


# ---------------------------------------------------------------------------
# bootstrap


_M64 = (1 << 64) - 1


def _ref_splitmix_indices(n, rounds, seed):
    """Independent re-implementation of the documented index definition."""

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    base = mix(seed)
    out = []
    for r in range(rounds):
        row = []
        for j in range(n):
            k = r * n + j
            z = mix((base + (k + 1) * 0x9E3779B97F4A7C15) & _M64)
            row.append(((z >> 32) * n) >> 32)
        out.append(row)
    return out


def test_bootstrap_indices_definition_and_range():
    got = list(S.bootstrap_indices(17, 5, 42))
    assert got == _ref_splitmix_indices(17, 5, 42)
    assert len(got) == 5 and all(len(r) == 17 for r in got)
    assert all(0 <= i < 17 for r in got for i in r)
    # pinned first values (seed 0, n = 10): guards against accidental change
    first = next(iter(S.bootstrap_indices(10, 1, 0)))
    assert first == _ref_splitmix_indices(10, 1, 0)[0]
    assert list(S.bootstrap_indices(1, 3, 5)) == [[0], [0], [0]]


@pytest.mark.parametrize(
    "args", [(0, 1, 0), (2**32, 1, 0), (5, 0, 0), (5, 1, -1), (5, 1, 1.5), (5, 1, 2**64)]
)
def test_bootstrap_indices_rejects(args):
    with pytest.raises((ValueError, TypeError)):
        S.bootstrap_indices(*args)


def test_bootstrap_indices_pinned_literals():
    # Literal values computed once from the documented definition (seed 0, n 10).
    ref = _ref_splitmix_indices(10, 2, 0)
    assert list(S.bootstrap_indices(10, 2, 0)) == ref
    assert ref[0] == [8, 4, 0, 9, 1, 3, 1, 7, 2, 9]
    assert ref[1] == [3, 7, 5, 5, 7, 5, 4, 7, 2, 8]
    # splitmix64 seeded with mix(0) = 0 -> first output is the well-known
    # splitmix64(0) value 0xE220A8397B1DCDAF.
    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    assert mix(0) == 0
    assert mix(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF
    assert ref[0][0] == ((0xE220A8397B1DCDAF >> 32) * 10) >> 32 == 8


def _rows(n, labels=("a", "b"), seed=3):
    rng = random.Random(seed)
    return {lab: [rng.lognormvariate(0.0, 0.5) for _ in range(n)] for lab in labels}


def test_bootstrap_reproducible_and_paired():
    rows = _rows(30)
    a = S.bootstrap_gini(rows, rounds=50, seed=1, force_pure=True)
    b = S.bootstrap_gini(rows, rounds=50, seed=1, force_pure=True)
    c = S.bootstrap_gini(rows, rounds=50, seed=2, force_pure=True)
    assert a == b
    assert a["a"] != c["a"]
    assert set(a) == {"a", "b"} and all(len(v) == 50 for v in a.values())
    # each replicate is gini() of the same resampled languages for every label
    for r, idx in enumerate(S.bootstrap_indices(30, 50, 1)):
        for lab in rows:
            assert a[lab][r] == S.gini([rows[lab][i] for i in idx])


def test_bootstrap_numpy_equals_pure_exactly():
    pytest.importorskip("numpy")
    for n, rounds, seed in [(1, 3, 0), (2, 7, 5), (45, 300, 11), (450, 40, 0)]:
        rows = _rows(n, labels=("x", "y", "z"), seed=n)
        rows["z"] = [0.0] * (n - 1) + [1.0]  # zero-sum resamples -> nan in both paths
        fast = S.bootstrap_gini(rows, rounds=rounds, seed=seed)
        pure = S.bootstrap_gini(rows, rounds=rounds, seed=seed, force_pure=True)
        for lab in rows:
            for f, p in zip(fast[lab], pure[lab]):
                assert (f == p) or (math.isnan(f) and math.isnan(p)), (n, lab, f, p)
            assert all(type(v) is float for v in fast[lab])


def test_bootstrap_numpy_chunking_is_seamless(monkeypatch):
    pytest.importorskip("numpy")
    rows = _rows(20)
    whole = S.bootstrap_gini(rows, rounds=37, seed=9)
    monkeypatch.setattr(S, "_CHUNK_CELLS", 20 * 5)  # 5 rounds per chunk, ragged last chunk
    assert S.bootstrap_gini(rows, rounds=37, seed=9) == whole


def test_bootstrap_mean_close_to_sample_gini():
    rows = _rows(400, labels=("only",), seed=17)
    g = S.gini(rows["only"])
    reps = S.bootstrap_gini(rows, rounds=400, seed=0)["only"]
    mean = sum(reps) / len(reps)
    assert abs(mean - g) < 0.01
    lo, hi = S.interval(reps, 0.95)
    assert lo < g < hi


def test_bootstrap_rejects_bad_rows():
    with pytest.raises(ValueError):
        S.bootstrap_gini({})
    with pytest.raises(ValueError):
        S.bootstrap_gini({"a": [1, 2], "b": [1, 2, 3]})
    with pytest.raises(ValueError):
        S.bootstrap_gini({"a": [1, -2]})
    with pytest.raises(ValueError):
        S.bootstrap_gini({"a": [1, 2]}, rounds=0)


def test_works_without_numpy():
    import subprocess
    import sys
    import os

    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from supertok.evaluation import stats as S\n"
        "r = S.bootstrap_gini({'a': [1.0, 2.0, 3.0]}, rounds=4, seed=3)\n"
        "assert r == S.bootstrap_gini({'a': [1.0, 2.0, 3.0]}, rounds=4, seed=3, force_pure=True)\n"
        "print(S.gini([1, 2, 3, 4]), S.wilcoxon([1, 2, 3], [0, 0, 0]).pvalue)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.25", "0.25"]
