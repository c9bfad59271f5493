#!/usr/bin/env python3
"""Plots of bench/RESULTS.md's tables: encode speed and training time against the peers, as PNG.

    python bench/plot.py                 # reads bench/RESULTS.md, writes bench/plots/*.png and its entry
    python bench/plot.py --no-results    # the PNGs only, RESULTS.md left alone
    python bench/plot.py --out DIR       # the PNGs into DIR

Nothing is measured here and no number is typed in: every bar is a cell of a table a benchmark
script wrote into bench/RESULTS.md, parsed from its text. The encode plots come from the
"encode.py" entry (its per-language tables "1 thread, fresh text, CPU time: ..." and the others:
the bold ratio to tiktoken in each cell, "**3.41x** 46.1 (24.4–56.8)"; and its summary of
geometric means); the training plot from the train.py entry that has every training peer
(HuggingFace tokenizers, rustbpe, bpeasy) beside supertok, its "CPU s" column. A tool whose cell
says "not exact" (ids that differ from tiktoken's) gets no bar: it is marked as excluded and the
note under the plot says where its ids differed.

Each figure says what it shows (CPU time, the ratio or seconds), the entry's date, command and
machine line. The PNGs are the same bytes for the same tables (the Agg backend, no software or date
metadata), so a rerun on unchanged data changes nothing in git. Then the script writes its own
entry, "plot.py", into bench/RESULTS.md (bench/_results.py): an image link per plot and the entry
and table it came from; the other entries stay as they are.

The parser needs only the standard library (tests/test_bench_plot.py runs it without matplotlib);
the rendering needs matplotlib, from the bench extra: pip install -e '.[bench]'.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _results  # noqa: E402

RESULTS = _results.RESULTS
OUT = os.path.join(HERE, "plots")
TRAIN_PEERS = ("hf", "rustbpe", "bpeasy")


# ---- parsing: the standard library only ----------------------------------------------------------

class Entry:
    """One level-2 section of RESULTS.md: "## NAME, DATE", the command (the first `...` span of
    the line after the heading), the machine (see machine_line) and the tables under it."""

    def __init__(self, text):
        lines = text.splitlines()
        self.heading = lines[0][3:].strip()
        self.name, _, self.date = self.heading.rpartition(", ")
        if not self.name:
            self.name, self.date = self.heading, ""
        self.text = text
        paras = [p.strip() for p in "\n".join(lines[1:]).split("\n\n") if p.strip()]
        self.command = ""
        self.machine = ""
        if paras and paras[0].startswith("`"):
            m = re.match(r"`([^`]*)`", paras[0])
            self.command = m.group(1) if m else ""
            if len(paras) > 1 and not paras[1].startswith(("|", "#")):
                self.machine = machine_line(paras[1])
        self.tables = tables(text)

    def table(self, title_start):
        """The first table whose title starts with title_start."""
        for t in self.tables:
            if t.title.startswith(title_start):
                return t
        raise KeyError("no table %r in the entry %r" % (title_start, self.heading))


def machine_line(paragraph):
    """The machine, out of the paragraph that follows an entry's command: the ";"-separated part
    that names the cores ("2-core AMD EPYC, Linux, Python 3.11.7, shared with other jobs"; in
    _results.py's own entries "Linux-..., AMD EPYC, 2 cores, Python 3.11.7"), else the first part."""
    text = " ".join(paragraph.split()).strip("()")
    parts = [p.strip() for p in text.split(";")]
    for p in parts:
        if re.search(r"\bcores?\b|\d-core", p):
            return p
    return parts[0][:100]


class Table:
    """A markdown table: its title (the text of the last "####" heading above it in the entry,
    "" when it has none), its header cells and its body rows (lists of cell texts)."""

    def __init__(self, title, header, rows, line):
        self.title, self.header, self.rows, self.line = title, header, rows, line

    def column(self, name):
        return self.header.index(name)

    def dicts(self):
        return [dict(zip(self.header, r)) for r in self.rows]


def split_row(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text):
    """Every markdown table in TEXT, in order, each titled by the "####" heading above it."""
    out, title = [], ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#### "):
            title = ln[5:].strip()
        if ln.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|[-:| ]+\|?", lines[i + 1].strip()):
            header = split_row(ln)
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(split_row(lines[j]))
                j += 1
            out.append(Table(title, header, rows, i))
            title = ""
            i = j
            continue
        i += 1
    return out


def entries(text):
    """The entries of a RESULTS.md text, in order."""
    _, sections = _results._split(text)
    return [Entry(s) for s in sections]


def read_entries(path=RESULTS):
    with open(path, encoding="utf-8") as f:
        return entries(f.read())


RATIO = re.compile(r"(?:\*\*)?(\d+(?:\.\d+)?)x(?:\*\*)?(?=\s|$)")


def ratio(cell):
    """(ratio, None) for a cell with a ratio ("**3.41x** 46.1 (24.4–56.8)", "2.99x", "1.00x"), else
    (None, why): "not exact", or the cell's text (an error, "crashed", "n/a")."""
    cell = cell.strip()
    if cell.startswith("not exact"):
        return None, "not exact"
    m = RATIO.match(cell)
    if m:
        return float(m.group(1)), None
    return None, cell or "empty"


SETTINGS = (("1 thread", "fresh"), ("1 thread", "warm"), ("all cores", "fresh"), ("all cores", "warm"))


class EncodeData:
    """The encode.py entry's tables: its per-language ratio tables, CPU time, for each (setting,
    mode) of SETTINGS (setting as the title gives it: "1 thread", "all cores (2)"), and its summary.

    langs[(setting, mode)]: the table's object; ratios[(setting, mode)][lang][tool]: (ratio, why)
    of the cell, lang "geometric mean" included. tools: the tools, tiktoken first, as the header
    lists them. summary[(setting, mode, clock)][tool]: (ratio, why)."""

    def __init__(self, entry):
        self.entry = entry
        self.langs, self.ratios = {}, {}
        for t in entry.tables:
            m = re.match(r"(1 thread|all cores(?: \(\d+\))?), (fresh|warm) text, CPU time", t.title)
            if not m or t.header[:3] != ["lang", "MB", "tiktoken"]:
                continue
            key = (m.group(1).split(" (")[0], m.group(2))
            self.langs[key] = t
            self.ratios[key] = {r[0]: {tool: ratio(c) for tool, c in zip(t.header[2:], r[2:])} for r in t.rows}
        missing = [k for k in SETTINGS if k not in self.langs]
        if missing:
            raise KeyError("the entry %r has no table for %s" % (entry.heading, missing))
        self.tools = self.langs[SETTINGS[0]].header[2:]
        self.languages = [r[0] for r in self.langs[SETTINGS[0]].rows if r[0] != "geometric mean"]
        self.summary_table = entry.table("Summary")
        self.summary = {}
        h = self.summary_table.header
        for r in self.summary_table.rows:
            self.summary[(r[0].split(" (")[0], r[1], r[2])] = {tool: ratio(c) for tool, c in zip(h[3:], r[3:])}
        self.setting_label = {k[0]: self.langs[k].title.split(",")[0] for k in SETTINGS}


def encode_entry(ents):
    for e in ents:
        if e.name == "encode.py":
            return e
    raise KeyError("no \"encode.py\" entry (the full run: python bench/encode.py)")


TRAIN_COLUMNS = ["input", "vocab", "threads", "tool", "wall s", "CPU s"]


def train_table(entry):
    """The entry's main training table (input, vocab, threads, tool, wall s, CPU s, ...), or None."""
    for t in entry.tables:
        if t.header[:6] == TRAIN_COLUMNS:
            return t
    return None


def train_entry(ents, name=None):
    """The train.py entry to plot: NAME's, else the one whose main table has every training peer
    and a supertok row, the most rows first (the earliest such entry on a tie)."""
    best = None
    for e in ents:
        if not (e.name == "train.py" or e.name.startswith("train.py ")):
            continue
        t = train_table(e)
        if t is None:
            continue
        if name is not None:
            if e.name == name:
                return e
            continue
        tools = {r[3] for r in t.rows}
        if all(p in tools for p in TRAIN_PEERS) and any(x.startswith("supertok") for x in tools):
            if best is None or len(t.rows) > len(train_table(best).rows):
                best = e
    if best is None:
        raise KeyError("no train.py entry %s" % (repr(name) if name else "with hf, rustbpe, bpeasy and supertok"))
    return best


def seconds(cell):
    """The median of a "2.75" or "18.21 (16.75–20.47)" cell."""
    return float(cell.split()[0])


# ---- rendering: matplotlib -----------------------------------------------------------------------

def need_matplotlib():
    try:
        import matplotlib
    except ImportError:
        sys.exit("bench/plot.py needs matplotlib to draw the plots (it is in the bench extra, never needed by "
                 "the package): pip install -e '.[bench]'")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.family": "DejaVu Sans", "font.size": 9, "axes.titlesize": 10,
                         "svg.hashsalt": "supertok", "path.simplify": True})
    return plt


PALETTE = ["#d62728", "#ff9896", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8"]


def colours(tools):
    """The same colour for a tool in every figure: supertok red, its wasmtime build light red."""
    return {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(tools)}


def footer(fig, entry, extra=""):
    text = ("From bench/RESULTS.md, entry \"%s\": `%s`\nMachine: %s.%s"
            % (entry.heading, entry.command, entry.machine or "not stated", extra))
    fig.text(0.01, 0.005, text, ha="left", va="bottom", fontsize=7.5, color="#333333", wrap=True)


EXCLUDED = "#444444"


def save(fig, path):
    """The figure as a PNG of at most 256 colours (a third of the bytes of matplotlib's RGBA, the
    text as sharp), with no metadata: the same bytes for the same tables."""
    import io
    from PIL import Image  # matplotlib's own dependency
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    buf.seek(0)
    quantize, dither = getattr(Image, "Quantize", Image), getattr(Image, "Dither", Image)  # Pillow < 9.1: Image.X
    im = Image.open(buf).convert("RGB").quantize(colors=256, method=quantize.MEDIANCUT, dither=dither.NONE)
    im.save(path, format="PNG", optimize=True)


def plot_encode_langs(plt, data, setting, path):
    """Two panels (fresh, warm): grouped bars per language of each tool's CPU-time ratio to tiktoken."""
    tools = [t for t in data.tools if t != "tiktoken"]
    col = colours(tools)
    rows = data.languages + ["geometric mean"]
    fig, axes = plt.subplots(2, 1, figsize=(13, 8.6), sharex=True)
    notes = []
    width = 0.8 / len(tools)
    for ax, mode in zip(axes, ("fresh", "warm")):
        key = (setting, mode)
        top = max(r for lang in rows for r, _ in data.ratios[key][lang].values() if r is not None)
        for j, tool in enumerate(tools):
            xs, ys = [], []
            for i, lang in enumerate(rows):
                r, why = data.ratios[key][lang][tool]
                x = i - 0.4 + width * (j + 0.5)
                if r is None:
                    ax.text(x, top * 0.13, "%s excluded: %s" % (tool, why), rotation=90, ha="center", va="bottom",
                            fontsize=6.5, color=EXCLUDED)
                    ax.plot([x], [top * 0.06], marker="x", color=col[tool], markersize=6, markeredgewidth=2)
                    if lang != "geometric mean":
                        cell = data.langs[key].rows[rows.index(lang)][data.langs[key].column(tool)]
                        notes.append("%s, %s, %s: %s" % (tool, mode, lang, cell))
                    continue
                xs.append(x)
                ys.append(r)
                cell = data.langs[key].rows[rows.index(lang)][data.langs[key].column(tool)]
                m = re.search(r"\[([^\];]*)", cell)
                if m:  # a cell from part of the rounds: "[3/7 rounds; the others: error: ...]"
                    notes.append("%s, %s, %s: the bar is from %s (the others failed)" % (tool, mode, lang, m.group(1)))
            ax.bar(xs, ys, width * 0.92, color=col[tool], label=tool if mode == "fresh" else None,
                   edgecolor="black" if tool == "supertok" else "none", linewidth=0.6)
            if tool == "supertok":
                for x, y in zip(xs, ys):
                    ax.text(x, y + top * 0.01, "%.2f" % y, ha="center", va="bottom", fontsize=6.5)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="tiktoken = 1" if mode == "fresh" else None)
        ax.axvline(len(rows) - 1.5, color="#999999", linewidth=0.6)
        ax.set_ylim(0, top * 1.08)
        ax.set_ylabel("ratio to tiktoken\n(its CPU time / the tool's; higher is faster)")
        ax.set_title("%s, %s text: CPU time, ratio to tiktoken in the same rounds (the bold ratio of each cell)"
                     % (data.setting_label[setting], mode), loc="left")
        ax.grid(axis="y", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
    axes[1].set_xticks(range(len(rows)))
    axes[1].set_xticklabels(rows)
    axes[0].legend(ncol=len(tools) + 1, fontsize=7.5, loc="upper left", frameon=False, bbox_to_anchor=(0, 1.02))
    fig.suptitle("supertok's encode_ordinary against its peers, o200k_base, %s (%s)"
                 % (data.setting_label[setting], data.entry.date), x=0.01, ha="left", fontsize=11)
    extra = ""
    if notes:
        extra = ("\nNo bar where a tool's ids differed from tiktoken's (\"not exact\": excluded, and so is its "
                 "geometric mean); remarks in the table's cells: " + "; ".join(notes))
    footer(fig, data.entry, extra)
    fig.tight_layout(rect=(0, 0.08 if notes else 0.05, 1, 0.97))
    save(fig, path)
    plt.close(fig)


def plot_encode_summary(plt, data, path):
    """Horizontal bars: each tool's geometric mean (over the languages) of the CPU-time ratio, per setting."""
    tools = [t for t in data.tools if t != "tiktoken"]
    col = colours(tools)
    fig, axes = plt.subplots(1, 4, figsize=(13, 4.6), sharey=True)
    notes = set()
    top = max(r for k, v in data.summary.items() if k[2] == "cpu" for r, _ in v.values() if r is not None)
    for ax, (setting, mode) in zip(axes, SETTINGS):
        vals = data.summary[(setting, mode, "cpu")]
        for i, tool in enumerate(tools):
            r, why = vals[tool]
            y = len(tools) - 1 - i
            if r is None:
                ax.text(top * 0.12, y, "excluded: " + why, va="center", fontsize=7.5, color=EXCLUDED)
                ax.plot([top * 0.05], [y], marker="x", color=col[tool], markersize=6, markeredgewidth=2)
                notes.add(tool)
                continue
            ax.barh(y, r, 0.75, color=col[tool], edgecolor="black" if tool == "supertok" else "none", linewidth=0.6)
            ax.text(r + top * 0.01, y, "%.2fx" % r, va="center", fontsize=7)
        ax.axvline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xlim(0, top * 1.18)
        ax.set_title("%s, %s text" % (data.setting_label[setting], mode), fontsize=9.5)
        ax.set_xlabel("ratio to tiktoken (CPU time)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
    axes[0].set_yticks(range(len(tools)))
    axes[0].set_yticklabels(list(reversed(tools)))
    fig.suptitle("Encode speed against the peers, o200k_base (%s): geometric mean over %s of the\n"
                 "ratio to tiktoken of CPU time (tiktoken's CPU time / the tool's; dashed: tiktoken = 1; higher is faster)"
                 % (data.entry.date, ", ".join(data.languages)), x=0.01, ha="left", fontsize=10.5)
    extra = ""
    if notes:
        extra = ("\n%s: not exact in at least one language (ids differed from tiktoken's), so no geometric mean "
                 "is shown." % ", ".join(sorted(notes)))
    footer(fig, data.entry, extra)
    fig.tight_layout(rect=(0, 0.11, 1, 0.92))
    save(fig, path)
    plt.close(fig)


def threads_label(cell):
    """ "1" -> "1 thread", "2 (all)" -> "all cores (2)"."""
    m = re.fullmatch(r"(\d+) \(all\)", cell)
    if m:
        return "all cores (%s)" % m.group(1)
    return cell + (" thread" if cell == "1" else " threads")


def plot_train(plt, entry, path):
    """One panel per input and vocab size: each tool's CPU seconds to train, 1 thread and all cores."""
    t = train_table(entry)
    rows = t.dicts()
    cases = []
    for r in rows:
        c = (r["input"], r["vocab"])
        if c not in cases:
            cases.append(c)
    tools = []
    for r in rows:
        if r["tool"] not in tools:
            tools.append(r["tool"])
    threads = []
    for r in rows:
        if r["threads"] not in threads:
            threads.append(r["threads"])
    shades = {th: a for th, a in zip(threads, (1.0, 0.45, 0.25))}
    col = colours(tools)
    ncol = 2 if len(cases) > 1 else 1
    nrow = (len(cases) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(13, 2.2 + 2.0 * nrow * max(1, len(tools) / 4)), squeeze=False)
    h = 0.8 / len(threads)
    for ax, case in zip(axes.flat, cases):
        here = [r for r in rows if (r["input"], r["vocab"]) == case]
        top = max(seconds(r["CPU s"]) for r in here)
        for i, tool in enumerate(tools):
            for k, th in enumerate(threads):
                r = next((r for r in here if r["tool"] == tool and r["threads"] == th), None)
                if r is None:
                    continue
                y = len(tools) - 1 - i + 0.4 - h * (k + 0.5)
                v = seconds(r["CPU s"])
                ax.barh(y, v, h * 0.9, color=col[tool], alpha=shades[th],
                        edgecolor="black" if tool.startswith("supertok") else "none", linewidth=0.5)
                ax.text(v + top * 0.01, y, "%.2f s (%s)" % (v, threads_label(th)), va="center", fontsize=6.5)
        ax.set_yticks(range(len(tools)))
        ax.set_yticklabels(list(reversed(tools)))
        ax.set_xlim(0, top * 1.35)
        merges = sorted({int(re.sub(r"\D", "", r["merges"].split()[0])) for r in here if r.get("merges")})
        made = ""
        if merges:
            made = ", %s merges" % ("{:,}".format(merges[0]) if len(merges) == 1
                                    else "{:,}-{:,}".format(merges[0], merges[-1]))
        ax.set_title("input %s, vocab %s%s" % (case + (made,)), loc="left", fontsize=9.5)
        ax.set_xlabel("CPU seconds to train (user + system of every thread; shorter is faster)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
    for ax in list(axes.flat)[len(cases):]:
        ax.axis("off")
    fig.suptitle("BPE training time against HuggingFace tokenizers (hf), rustbpe and bpeasy: CPU seconds, "
                 "dark bars 1 thread, light bars all cores (%s)" % entry.date, x=0.01, ha="left", fontsize=10.5)
    footer(fig, entry)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    save(fig, path)
    plt.close(fig)


# ---- the entry -----------------------------------------------------------------------------------

def render(ents, out, train_name=None):
    """Draw every plot into OUT; returns [(file name, alt text, where it came from)]."""
    plt = need_matplotlib()
    os.makedirs(out, exist_ok=True)
    enc = EncodeData(encode_entry(ents))
    tr = train_entry(ents, train_name)
    done = []

    def src(entry, titles):
        return "the entry \"%s\", %s" % (entry.heading, " and ".join("table \"%s\"" % s for s in titles))

    name = "encode_1thread.png"
    plot_encode_langs(plt, enc, "1 thread", os.path.join(out, name))
    done.append((name, "encode speed per language, 1 thread, CPU time, ratio to tiktoken",
                 src(enc.entry, [enc.langs[("1 thread", m)].title.split(":")[0] for m in ("fresh", "warm")])
                 + " (the bold ratio of each cell)"))
    name = "encode_all_cores.png"
    plot_encode_langs(plt, enc, "all cores", os.path.join(out, name))
    done.append((name, "encode speed per language, all cores, CPU time, ratio to tiktoken",
                 src(enc.entry, [enc.langs[("all cores", m)].title.split(":")[0] for m in ("fresh", "warm")])
                 + " (the bold ratio of each cell)"))
    name = "encode_summary.png"
    plot_encode_summary(plt, enc, os.path.join(out, name))
    done.append((name, "encode speed, geometric mean over the languages, CPU time, ratio to tiktoken",
                 src(enc.entry, [enc.summary_table.title.split(":")[0]]) + ", its \"cpu\" rows"))
    name = "train.png"
    plot_train(plt, tr, os.path.join(out, name))
    done.append((name, "BPE training CPU seconds against hf, rustbpe and bpeasy",
                 "the entry \"%s\", its table of training runs (column \"CPU s\")" % tr.heading))
    return done


def body(done, out, results):
    rel = os.path.relpath(out, os.path.dirname(os.path.abspath(results))).replace(os.sep, "/")
    lines = ["Plots of the tables above, parsed from this file (nothing measured or typed in by this script).", ""]
    for name, alt, where in done:
        lines += ["![%s](%s/%s)" % (alt, rel, name), "", "`%s/%s`: from %s." % (rel, name, where), ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=RESULTS, help="the results file to read (and write the entry into)")
    ap.add_argument("--out", default=OUT, help="folder for the PNGs (default bench/plots)")
    ap.add_argument("--train-entry", default=None,
                    help="the train.py entry to plot, by its name (default: the one with every training peer)")
    ap.add_argument("--no-results", action="store_true", help="write the PNGs only, not the entry")
    args = ap.parse_args(argv)
    ents = read_entries(args.results)
    done = render(ents, args.out, args.train_entry)
    for name, _, where in done:
        path = os.path.join(args.out, name)
        print("%s (%d bytes): from %s" % (os.path.relpath(path, ROOT), os.path.getsize(path), where), file=sys.stderr)
    if not args.no_results:
        argv = sys.argv[1:] if argv is None else list(argv)
        _results.write_entry("plot.py", _results.command_line("plot.py", argv), body(done, args.out, args.results),
                             path=args.results)
        print("wrote the entry \"plot.py\" in %s" % os.path.relpath(args.results, ROOT), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
