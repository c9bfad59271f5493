"""PNG plots for a tokenizer evaluation report.

matplotlib is optional: it is imported lazily inside the functions that need
it, so this module always imports.  ``available()`` says whether plots can be
drawn; ``MISSING`` is the message to show when they cannot.

Figures are drawn with ``matplotlib.figure.Figure`` and the Agg canvas
directly, never through pyplot, so no global state is touched.
"""

import math
import os

MISSING = "plots need matplotlib: pip install 'supertok[plot]'"

WIDTH, HEIGHT, DPI = 8.0, 4.5, 110
MAX_TICK_LABELS = 60

_FLOOR_NAMES = {1: "1-byte", 2: "2-byte", 3: "3-byte", 4: "4-byte"}
_FLOOR_COLORS = {1: "#1f77b4", 2: "#2ca02c", 3: "#ff7f0e", 4: "#d62728",
                 None: "#7f7f7f"}


def available():
    """True when matplotlib (with the Agg backend) can be imported."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    except Exception:
        return False
    return True


def lorenz_points(values):
    """Lorenz curve points of ``values``: a list of (x, y) from (0, 0) to (1, 1).

    Values are sorted ascending; x is the cumulative share of items and y the
    cumulative share of the total.  Missing (None / NaN) values are dropped.
    An empty or all-zero input gives the equality line.
    """
    vals = sorted(float(v) for v in values if _number(v))
    n = len(vals)
    if n == 0:
        return [(0.0, 0.0), (1.0, 1.0)]
    total = sum(vals)
    points = [(0.0, 0.0)]
    cum = 0.0
    for i, v in enumerate(vals, 1):
        cum += v
        y = cum / total if total else i / n
        points.append((i / n, y))
    points[-1] = (1.0, 1.0)
    return points


def write_plots(data, delta_samples, folder):
    """Write the report's PNG plots into ``folder`` (an existing directory).

    Returns a list of (filename, caption), in the order the files were written.
    Raises RuntimeError(MISSING) when matplotlib is not available.
    """
    if not available():
        raise RuntimeError(MISSING)
    delta_samples = delta_samples or {}
    labels = _labels(data)
    written = []

    def emit(name, caption, fig):
        _save(fig, os.path.join(folder, name))
        written.append((name, caption))

    emit("premium.png",
         "Token premium by language (tokens relative to the reference "
         "language) for each tokenizer; the line at 1.0 is the reference.",
         _premium_figure(data, labels))
    emit("lorenz.png",
         "Lorenz curves of the per-language token premiums; the further a "
         "curve sags below the diagonal, the less equal the tokenizer.",
         _lorenz_figure(data, labels))
    for i, comp in enumerate(data.get("comparisons") or [], 1):
        a, b = comp.get("a"), comp.get("b")
        emit("scatter-%d.png" % i,
             "Mean tokens per language, %s (x) against %s (y), coloured by "
             "encoding floor; points above the diagonal cost more with %s."
             % (a, b, b),
             _scatter_figure(data, a, b))
        samples = delta_samples.get((a, b))
        if samples is not None and len(samples):
            emit("delta-gini-%d.png" % i,
                 "Bootstrap distribution of the Gini difference %s minus %s, "
                 "with the point estimate, the interval and zero marked."
                 % (a, b),
                 _delta_figure(comp, samples))
    emit("groups.png",
         "Mean token premium per encoding-floor group (UTF-8 bytes per "
         "character of the script) for each tokenizer.",
         _groups_figure(data, labels))
    return written


# -- helpers ---------------------------------------------------------------

def _number(v):
    if v is None or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _labels(data):
    labels = [t.get("label") for t in data.get("tokenizers") or []]
    labels = [lab for lab in labels if lab is not None]
    for lab in data.get("results") or {}:
        if lab not in labels:
            labels.append(lab)
    return labels


def _result(data, label):
    return (data.get("results") or {}).get(label) or {}


def _gini(data, label):
    g = _result(data, label).get("gini")
    return "%.3f" % g if _number(g) else "n/a"


def _premiums(data, label):
    """{lang: premium} for non-reference languages with a usable premium."""
    ref = data.get("reference")
    out = {}
    for lang, row in (_result(data, label).get("languages") or {}).items():
        if lang == ref or not row:
            continue
        p = row.get("premium")
        if _number(p):
            out[lang] = float(p)
    return out


def _new_figure():
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path):
    try:
        fig.tight_layout()
    except Exception:  # tight_layout can fail on odd content; keep the plot
        pass
    fig.savefig(path, dpi=DPI, format="png")
    fig.clear()


def _empty(ax, text="no data"):
    ax.text(0.5, 0.5, text, ha="center", va="center",
            transform=ax.transAxes, color="#666666")


def _premium_figure(data, labels):
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    ref = data.get("reference")
    first = _premiums(data, labels[0]) if labels else {}
    langs = set()
    for lab in labels:
        langs.update(_premiums(data, lab))
    # sort by the first tokenizer's premium; languages it lacks go last
    order = sorted(langs, key=lambda l: (l not in first, first.get(l, 0.0), l))
    pos = {lang: i for i, lang in enumerate(order)}
    many = len(order) > MAX_TICK_LABELS
    for lab in labels:
        prem = _premiums(data, lab)
        xs = [pos[l] for l in order if l in prem]
        ys = [prem[l] for l in order if l in prem]
        ax.plot(xs, ys, marker="." if many else "o",
                markersize=3 if many else 5,
                linestyle="none" if many else "-", linewidth=1,
                label="%s (Gini %s)" % (lab, _gini(data, lab)))
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1,
               label="reference (%s)" % ref if ref else "reference")
    if not order:
        _empty(ax)
    if many:
        ax.set_xticks([])
        ax.set_xlabel("language (%d, sorted by %s premium)"
                      % (len(order), labels[0] if labels else "premium"))
    else:
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels(order, rotation=90 if len(order) > 15 else 45,
                           fontsize=7 if len(order) > 30 else 9)
        ax.set_xlabel("language (sorted by %s premium)"
                      % (labels[0] if labels else ""))
    ax.set_ylabel("token premium (× %s)" % (ref or "reference"))
    ax.set_title("Token premium by language")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def _lorenz_figure(data, labels):
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1,
            label="equality")
    for lab in labels:
        pts = lorenz_points(_premiums(data, lab).values())
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linewidth=1.5,
                label="%s (G = %s)" % (lab, _gini(data, lab)))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("cumulative share of languages (lowest premium first)")
    ax.set_ylabel("cumulative share of premium")
    ax.set_title("Lorenz curves of token premium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def _floor(data, lang):
    info = (data.get("languages") or {}).get(lang) or {}
    f = info.get("floor")
    try:
        f = int(f)
    except (TypeError, ValueError):
        return None
    return f if f in _FLOOR_NAMES else None


def _mean_tokens(data, label):
    out = {}
    for lang, row in (_result(data, label).get("languages") or {}).items():
        v = (row or {}).get("mean_tokens")
        if _number(v):
            out[lang] = float(v)
    return out


def _scatter_figure(data, a, b):
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    ma, mb = _mean_tokens(data, a), _mean_tokens(data, b)
    langs = sorted(set(ma) & set(mb))
    vals = [ma[l] for l in langs] + [mb[l] for l in langs]
    positive = [v for v in vals if v > 0]
    log = (bool(positive) and len(positive) == len(vals)
           and max(positive) > 10 * min(positive))
    for floor in (1, 2, 3, 4, None):
        group = [l for l in langs if _floor(data, l) == floor]
        if not group:
            continue
        name = _FLOOR_NAMES.get(floor, "unknown")
        ax.scatter([ma[l] for l in group], [mb[l] for l in group], s=14,
                   color=_FLOOR_COLORS[floor], alpha=0.8,
                   label="%s (%d)" % (name, len(group)))
    if vals:
        lo, hi = min(vals), max(vals)
        if lo == hi:
            lo, hi = (lo * 0.9, hi * 1.1) if lo > 0 else (lo - 1, hi + 1)
        ax.plot([lo, hi], [lo, hi], color="black", linestyle="--",
                linewidth=1, label="y = x")
        ax.legend(fontsize=8, title="encoding floor", title_fontsize=8,
                  loc="upper left")
    else:
        _empty(ax)
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("mean tokens, %s" % a)
    ax.set_ylabel("mean tokens, %s" % b)
    ax.set_title("%s vs %s" % (a, b))
    ax.grid(True, alpha=0.3)
    return fig


def _delta_figure(comp, samples):
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    xs = [float(s) for s in samples if _number(s)]
    if xs:
        bins = min(60, max(10, int(math.sqrt(len(xs)))))
        if max(xs) == min(xs):
            bins = 1
        ax.hist(xs, bins=bins, color="#9ecae1", edgecolor="#4a90c2",
                linewidth=0.4, label="bootstrap samples (%d)" % len(xs))
    else:
        _empty(ax)
    d = comp.get("delta_gini")
    interval = comp.get("interval") or []
    ax.axvline(0.0, color="black", linewidth=1, label="0 (no difference)")
    if _number(d):
        ax.axvline(float(d), color="#d62728", linewidth=1.5,
                   label="ΔGini = %.4f" % float(d))
    ends = [float(v) for v in interval if _number(v)]
    for j, v in enumerate(ends):
        ax.axvline(v, color="#d62728", linestyle="--", linewidth=1,
                   label="interval" if j == 0 else None)
    title = "ΔGini %s − %s" % (comp.get("a"), comp.get("b"))
    if _number(d):
        title += " = %.4f" % float(d)
    if len(ends) == 2:
        title += " [%.4f, %.4f]" % (ends[0], ends[1])
    ax.set_title(title)
    ax.set_xlabel("ΔGini (Gini of %s minus Gini of %s)"
                  % (comp.get("a"), comp.get("b")))
    ax.set_ylabel("bootstrap samples")
    ax.legend(fontsize=8)
    return fig


def _group_rows(data, label):
    return ((_result(data, label).get("groups") or {}).get("floor") or {})


def _groups_figure(data, labels):
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    floors = []
    counts = {}
    for f in (1, 2, 3, 4):
        for lab in labels:
            row = _group_rows(data, lab).get(str(f)) or _group_rows(
                data, lab).get(f)
            if row and _number(row.get("mean_premium")):
                if f not in floors:
                    floors.append(f)
                n = row.get("languages")
                if isinstance(n, int):
                    counts[f] = max(counts.get(f, 0), n)
    if floors and labels:
        width = 0.8 / len(labels)
        for k, lab in enumerate(labels):
            rows = _group_rows(data, lab)
            xs, ys = [], []
            for i, f in enumerate(floors):
                row = rows.get(str(f)) or rows.get(f) or {}
                v = row.get("mean_premium")
                if _number(v):
                    xs.append(i - 0.4 + width * (k + 0.5))
                    ys.append(float(v))
            ax.bar(xs, ys, width=width * 0.95,
                   label="%s (Gini %s)" % (lab, _gini(data, lab)))
        ax.set_xticks(range(len(floors)))
        ax.set_xticklabels(
            ["%s\n(%s languages)" % (_FLOOR_NAMES[f], counts.get(f, "?"))
             for f in floors])
        ax.legend(fontsize=8)
    else:
        _empty(ax)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("encoding floor (UTF-8 bytes per character of the script)")
    ax.set_ylabel("mean token premium")
    ax.set_title("Mean token premium by encoding-floor group")
    ax.grid(True, axis="y", alpha=0.3)
    return fig
