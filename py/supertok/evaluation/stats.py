"""Inequality statistics, bootstrap and significance tests for token premiums.

These are the statistics used by the UBE paper to summarise how unequally a
tokenizer treats languages (one "premium" per language):

* Gini coefficient  G = sum_i sum_j |x_i - x_j| / (2 N^2 mean(x)), computed in
  O(N log N) from the sorted values;
* sample variance with the N - 1 denominator;
* Theil-T  = (1/N) sum (x_i/mu) ln(x_i/mu) and Theil-L (mean log deviation)
  = (1/N) sum ln(mu/x_i);
* Lorenz curve points for plotting;
* a paired, seed-reproducible bootstrap of the Gini coefficient whose random
  indices come from a documented counter-based splitmix64 generator, so the
  pure-Python and numpy paths (and any other implementation) agree bit for bit
  and results never depend on numpy's or Python's RNG versions;
* percentile / percentile interval matching ``numpy.percentile`` ('linear');
* the two-sided Wilcoxon signed-rank test matching ``scipy.stats.wilcoxon``
  defaults (scipy 1.17), Holm and Benjamini-Hochberg p-value adjustment.

Only the standard library is needed at import time; numpy is used, when
importable, solely to vectorise :func:`bootstrap_gini`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Sequence, Tuple

__all__ = [
    "gini",
    "variance",
    "theil_t",
    "theil_l",
    "lorenz",
    "bootstrap_indices",
    "bootstrap_gini",
    "percentile",
    "interval",
    "WilcoxonResult",
    "wilcoxon",
    "holm",
    "benjamini_hochberg",
]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB

# Bounds the numpy bootstrap's working set: about this many index/value cells
# per chunk (8 bytes each, a handful of temporaries -> a few tens of MB).
_CHUNK_CELLS = 1 << 20


# ---------------------------------------------------------------------------
# validation helpers


def _floats(xs, name: str = "xs") -> List[float]:
    """Convert input to a list of finite floats, so every path sees the same numbers."""
    out = [float(v) for v in xs]
    for v in out:
        if not math.isfinite(v):
            raise ValueError(f"{name} must contain only finite numbers, got {v!r}")
    return out


def _nonneg(xs, what: str) -> List[float]:
    """Validate a non-empty sequence of finite non-negative values for an inequality index."""
    vals = _floats(xs)
    if not vals:
        raise ValueError(f"{what} of an empty sequence is undefined")
    for v in vals:
        if v < 0:
            raise ValueError(f"{what} requires non-negative values, got {v!r}")
    return vals


def _sorted_gini(s: Sequence[float]) -> float:
    """Gini of already-sorted values with a fixed left-to-right accumulation order."""
    # The accumulation order here is the contract that lets the numpy bootstrap
    # (which replays exactly these float operations column by column) be
    # bit-identical to the pure path and to gini() of the resampled data.
    n = len(s)
    num = 0.0
    den = 0.0
    for i, v in enumerate(s):
        num += float(2 * i + 1 - n) * v
        den += v
    if den == 0.0:
        return math.nan
    g = num / (n * den)
    # Rounding can leave a tiny negative value for (near-)equal data; the
    # population value is never negative.
    return g if g > 0.0 else 0.0


# ---------------------------------------------------------------------------
# inequality indices


def gini(xs: Sequence[float]) -> float:
    """Gini coefficient of non-negative values: the headline inequality index of the paper."""
    vals = _nonneg(xs, "gini")
    if len(vals) == 1:
        return 0.0
    if sum(vals) == 0.0:
        raise ValueError("gini is undefined when all values are zero (zero sum)")
    vals.sort()
    return _sorted_gini(vals)


def variance(xs: Sequence[float]) -> float:
    """Sample variance (N - 1 denominator), the unbiased spread of premiums."""
    vals = _floats(xs)
    n = len(vals)
    if n < 2:
        raise ValueError("variance needs at least two values")
    # Two-pass with exactly rounded sums avoids the cancellation of the
    # textbook sum-of-squares formula.
    mean = math.fsum(vals) / n
    return math.fsum((v - mean) ** 2 for v in vals) / (n - 1)


def theil_t(xs: Sequence[float]) -> float:
    """Theil-T index, an entropy inequality measure sensitive to the top of the distribution."""
    vals = _nonneg(xs, "theil_t")
    n = len(vals)
    mu = math.fsum(vals) / n
    if mu <= 0.0:
        raise ValueError("theil_t requires a positive mean (values sum to zero)")
    # 0 * ln 0 = 0 by continuity, so zero values simply contribute nothing.
    return math.fsum((v / mu) * math.log(v / mu) for v in vals if v > 0.0) / n


def theil_l(xs: Sequence[float]) -> float:
    """Theil-L index (mean log deviation), sensitive to the bottom of the distribution."""
    vals = _floats(xs)
    if not vals:
        raise ValueError("theil_l of an empty sequence is undefined")
    for v in vals:
        if v <= 0.0:
            raise ValueError(f"theil_l requires strictly positive values, got {v!r}")
    n = len(vals)
    mu = math.fsum(vals) / n
    return math.fsum(math.log(mu / v) for v in vals) / n


def lorenz(xs: Sequence[float]) -> List[Tuple[float, float]]:
    """Lorenz curve points (population share, cumulative value share) for plotting inequality."""
    vals = _nonneg(xs, "lorenz")
    total = math.fsum(vals)
    if total == 0.0:
        raise ValueError("lorenz is undefined when all values are zero (zero sum)")
    vals.sort()
    n = len(vals)
    points = [(0.0, 0.0)]
    partial: List[float] = []
    for i, v in enumerate(vals, start=1):
        partial.append(v)
        points.append((i / n, math.fsum(partial) / total))
    # Force the curve to end exactly on (1, 1) despite rounding.
    points[-1] = (1.0, 1.0)
    return points


# ---------------------------------------------------------------------------
# reproducible bootstrap


def _mix64(z: int) -> int:
    """splitmix64 output finaliser (Steele, Lea & Flood 2014) on a 64-bit integer."""
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK64
    return z ^ (z >> 31)


def _check_index_args(n: int, rounds: int, seed: int) -> None:
    """Validate bootstrap generator parameters so the documented arithmetic stays exact."""
    for name, v in (("n", n), ("rounds", rounds), ("seed", seed)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if not 1 <= n < (1 << 32):
        raise ValueError(f"n must satisfy 1 <= n < 2**32, got {n}")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if not 0 <= seed < (1 << 64):
        raise ValueError(f"seed must satisfy 0 <= seed < 2**64, got {seed}")


def bootstrap_indices(n: int, rounds: int, seed: int) -> Iterator[List[int]]:
    """Yield ``rounds`` lists of ``n`` resampling indices from a portable counter-based generator.

    Exact definition (all arithmetic modulo 2**64, ``>>`` logical shift)::

        mix(z):  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
                 z = (z ^ (z >> 27)) * 0x94D049BB133111EB
                 return z ^ (z >> 31)
        base     = mix(seed)
        k        = r * n + j          # round r in [0, rounds), position j in [0, n)
        state_k  = base + (k + 1) * 0x9E3779B97F4A7C15
        z_k      = mix(state_k)
        index    = ((z_k >> 32) * n) >> 32        # in [0, n)

    i.e. the k-th output of a standard splitmix64 stream seeded with
    ``mix(seed)``, mapped to [0, n) with Lemire's multiply-shift on its top
    32 bits. Requires 1 <= n < 2**32, rounds >= 1, 0 <= seed < 2**64.
    """
    _check_index_args(n, rounds, seed)
    return _index_rounds(n, rounds, seed)


def _index_rounds(n: int, rounds: int, seed: int) -> Iterator[List[int]]:
    """Generator body of bootstrap_indices, split out so validation happens eagerly."""
    base = _mix64(seed)
    state = base
    for _ in range(rounds):
        row = []
        for _ in range(n):
            state = (state + _GOLDEN) & _MASK64
            row.append(((_mix64(state) >> 32) * n) >> 32)
        yield row


def _np_index_block(np, base: int, n: int, r0: int, r1: int):
    """Rounds [r0, r1) of bootstrap_indices as a uint64 matrix, same arithmetic in numpy."""
    u = np.uint64
    k = (np.arange(r0, r1, dtype=u)[:, None] * u(n)) + np.arange(n, dtype=u)[None, :]
    # uint64 array arithmetic wraps modulo 2**64, which is exactly what the
    # definition asks for.
    z = u(base) + (k + u(1)) * u(_GOLDEN)
    del k
    z ^= z >> u(30)
    z *= u(_MIX1)
    z ^= z >> u(27)
    z *= u(_MIX2)
    z ^= z >> u(31)
    z >>= u(32)
    z *= u(n)
    z >>= u(32)
    return z


def _import_numpy():
    """Return numpy if importable, else None (numpy is an optional accelerator)."""
    try:
        import numpy as np  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return np


def bootstrap_gini(
    rows: Mapping[str, Sequence[float]],
    rounds: int = 10000,
    seed: int = 0,
    force_pure: bool = False,
) -> Dict[str, List[float]]:
    """Paired bootstrap of the Gini coefficient per label, giving its sampling distribution.

    ``rows`` maps a label (e.g. a tokenizer) to its N non-reference premiums,
    all in the same language order. Each round draws one index vector from
    :func:`bootstrap_indices` (n = N, same ``rounds``/``seed``) and applies it
    to every label, so differences between labels are compared on the same
    resampled languages. Returns label -> list of ``rounds`` Gini values;
    a resample whose values sum to zero yields ``nan``. The numpy path (used
    when numpy is importable and ``force_pure`` is false) is bit-identical to
    the pure path, and each value equals ``gini()`` of the resampled list.
    """
    if not rows:
        raise ValueError("bootstrap_gini needs at least one label")
    data: Dict[str, List[float]] = {}
    n = None
    for label, xs in rows.items():
        vals = _nonneg(xs, f"bootstrap_gini row {label!r}")
        if n is None:
            n = len(vals)
        elif len(vals) != n:
            raise ValueError(
                f"all rows must have the same length; {label!r} has {len(vals)}, expected {n}"
            )
        data[label] = vals
    assert n is not None
    _check_index_args(n, rounds, seed)

    np = None if force_pure else _import_numpy()
    if np is None:
        out: Dict[str, List[float]] = {label: [] for label in data}
        for idx in _index_rounds(n, rounds, seed):
            for label, vals in data.items():
                sample = sorted(vals[i] for i in idx)
                out[label].append(_sorted_gini(sample))
        return out
    return _bootstrap_gini_numpy(np, data, n, rounds, seed)


def _bootstrap_gini_numpy(np, data, n: int, rounds: int, seed: int) -> Dict[str, List[float]]:
    """Vectorised bootstrap_gini replaying _sorted_gini's float operations per column."""
    base = _mix64(seed)
    arrays = {label: np.asarray(vals, dtype=np.float64) for label, vals in data.items()}
    results = {label: np.empty(rounds, dtype=np.float64) for label in data}
    # Weights (2i + 1 - n) are small integers, exact in float64, as in the pure path.
    weights = [float(2 * i + 1 - n) for i in range(n)]
    chunk = max(1, _CHUNK_CELLS // n)
    for r0 in range(0, rounds, chunk):
        r1 = min(rounds, r0 + chunk)
        idx = _np_index_block(np, base, n, r0, r1).astype(np.intp)
        for label, arr in arrays.items():
            # Transposed + contiguous so each column step below is a fast
            # contiguous vector op; a sequential loop (not np.sum, whose
            # pairwise order differs) keeps bit-identity with the pure path.
            s = np.ascontiguousarray(np.sort(arr[idx], axis=1).T)
            num = np.zeros(r1 - r0, dtype=np.float64)
            den = np.zeros(r1 - r0, dtype=np.float64)
            for i in range(n):
                col = s[i]
                num += weights[i] * col
                den += col
            with np.errstate(divide="ignore", invalid="ignore"):
                g = num / (float(n) * den)
            g = np.where(den == 0.0, np.nan, np.where(g > 0.0, g, 0.0))
            results[label][r0:r1] = g
    return {label: res.tolist() for label, res in results.items()}


# ---------------------------------------------------------------------------
# percentiles


def percentile(values: Sequence[float], q: float) -> float:
    """q-th percentile with numpy.percentile's default 'linear' rule, for bootstrap intervals."""
    vals = _floats(values, "values")
    if not vals:
        raise ValueError("percentile of an empty sequence is undefined")
    q = float(q)
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    vals.sort()
    n = len(vals)
    # Same float operations, in the same order, as numpy's _quantile/_lerp so
    # results are bit-identical rather than merely close.
    vi = (n - 1) * (q / 100.0)
    if vi >= n - 1:
        return vals[-1]
    lo = math.floor(vi)
    gamma = vi - lo
    a, b = vals[lo], vals[lo + 1]
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1.0 - gamma)
    return a + diff * gamma


def interval(values: Sequence[float], level: float = 0.95) -> Tuple[float, float]:
    """Central percentile interval (e.g. 95 %) of bootstrap replicates."""
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    # Rounding strips representation noise (1 - 0.95 != 0.05 in binary) so a
    # 95 % interval uses exactly the 2.5 / 97.5 percentiles a user would pass
    # to numpy.percentile.
    tail = round((1.0 - level) * 50.0, 10)
    return percentile(values, tail), percentile(values, 100.0 - tail)


# ---------------------------------------------------------------------------
# Wilcoxon signed-rank test


@dataclass(frozen=True)
class WilcoxonResult:
    """Outcome of :func:`wilcoxon`; ``method`` is 'exact', 'approx' or 'none'."""

    statistic: float
    pvalue: float
    n: int
    method: str
    zeros: int


_SQRT1_2 = 0.7071067811865476


def _ndtr(a: float) -> float:
    """Standard normal CDF written like scipy.special.ndtr, so p-values agree to ~1 ulp."""
    x = a * _SQRT1_2
    z = abs(x)
    if z < _SQRT1_2:
        return 0.5 + 0.5 * math.erf(x)
    y = 0.5 * math.erfc(z)
    return 1.0 - y if x > 0 else y


def _signed_rank_counts(ranks2: Sequence[int]) -> List[int]:
    """Number of sign assignments giving each doubled positive-rank sum (subset-sum DP)."""
    # Doubled ranks are integers even with average (half-integer) ranks,
    # so the DP is exact in integer arithmetic.
    total = sum(ranks2)
    counts = [0] * (total + 1)
    counts[0] = 1
    reach = 0
    for r in ranks2:
        for s in range(reach, -1, -1):
            c = counts[s]
            if c:
                counts[s + r] += c
        reach += r
    return counts


def wilcoxon(x: Sequence[float], y: Sequence[float]) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test of paired samples, matching scipy.stats.wilcoxon defaults.

    Replicates scipy 1.17 with zero_method='wilcox', correction=False,
    method='auto': zero differences are dropped, ties get average ranks and the
    statistic is min(W+, W-). Method choice follows scipy, which decides on
    the number of pairs *before* dropping zeros (``len(x)``):

    * len(x) > 50: normal approximation with tie-corrected variance, no
      continuity correction (method 'approx');
    * len(x) <= 50, no ties and no zeros: exact null distribution (DP);
    * len(x) <= 13 with ties or zeros: scipy runs a permutation test that
      enumerates all 2**len(x) sign flips, i.e. the exact conditional
      distribution of W+ given the tied ranks; reproduced here by DP
      (reported as 'exact');
    * otherwise (ties or zeros, 14 <= len(x) <= 50): normal approximation.

    p = 2 * min(P(W+ <= w), P(W+ >= w)) capped at 1 for the exact cases.
    When every difference is zero scipy returns nan (or 1.0 via its
    permutation path); here the result is statistic 0.0, pvalue 1.0,
    method 'none', as "no evidence of a shift" is the usable answer.
    """
    xs = _floats(x, "x")
    ys = _floats(y, "y")
    if len(xs) != len(ys):
        raise ValueError(f"x and y must have the same length ({len(xs)} != {len(ys)})")
    total = len(xs)
    if total == 0:
        raise ValueError("wilcoxon needs at least one pair")
    d = [a - b for a, b in zip(xs, ys)]
    nonzero = [v for v in d if v != 0.0]
    zeros = total - len(nonzero)
    m = len(nonzero)
    if m == 0:
        return WilcoxonResult(statistic=0.0, pvalue=1.0, n=0, method="none", zeros=zeros)

    order = sorted(range(m), key=lambda i: abs(nonzero[i]))
    ranks2 = [0] * m  # twice the average rank, an exact integer
    tie_groups: List[int] = []
    i = 0
    while i < m:
        j = i
        while j + 1 < m and abs(nonzero[order[j + 1]]) == abs(nonzero[order[i]]):
            j += 1
        c = j - i + 1
        tie_groups.append(c)
        for p in range(i, j + 1):
            ranks2[order[p]] = 2 * i + c + 1
        i = j + 1
    has_ties = any(c > 1 for c in tie_groups)

    w_plus2 = sum(r for r, v in zip(ranks2, nonzero) if v > 0)
    w_minus2 = sum(r for r, v in zip(ranks2, nonzero) if v < 0)
    r_plus = w_plus2 / 2
    statistic = min(w_plus2, w_minus2) / 2

    if total > 50 or ((has_ties or zeros) and total > 13):
        count = float(m)
        mn = count * (count + 1.0) * 0.25
        se = count * (count + 1.0) * (2.0 * count + 1.0)
        tie_correct = float(sum(c**3 - c for c in tie_groups))
        se = math.sqrt((se - tie_correct / 2) / 24)
        z = (r_plus - mn) / se
        pvalue = 2 * _ndtr(-abs(z))
        return WilcoxonResult(statistic, pvalue, m, "approx", zeros)

    counts = _signed_rank_counts(ranks2)
    le = sum(counts[: w_plus2 + 1])
    ge = sum(counts[w_plus2:])
    # Powers of two keep count / 2**m exact, matching scipy's float sums.
    pvalue = min(1.0, 2 * (min(le, ge) / 2.0**m))
    return WilcoxonResult(statistic, pvalue, m, "exact", zeros)


# ---------------------------------------------------------------------------
# multiple-comparison adjustment


def _check_pvalues(pvalues) -> List[float]:
    """Validate p-values in [0, 1] so adjustments are meaningful."""
    ps = _floats(pvalues, "pvalues")
    for p in ps:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    return ps


def holm(pvalues: Sequence[float]) -> List[float]:
    """Holm step-down adjusted p-values (family-wise error control), in input order."""
    ps = _check_pvalues(pvalues)
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Sequence[float]) -> List[float]:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate), in input order."""
    ps = _check_pvalues(pvalues)
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        # p * (m / k) mirrors scipy.stats.false_discovery_control's rounding.
        running = min(running, ps[i] * (m / (rank + 1)))
        out[i] = running
    return out
