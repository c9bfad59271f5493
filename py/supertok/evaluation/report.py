"""The result of an evaluation: the numbers (`Report.data`, what report.json holds), views of
them by tokenizer and language, comparisons, and the files a report is saved as."""
import html
import json
import os

from . import plots as _plots


def _r(x, digits=4):
    return "—" if x is None else ("%.*f" % (digits, x))


class Comparison(dict):
    """ΔGini of a against b with its bootstrap interval, the Wilcoxon signed-rank test over the
    languages' mean token counts (p-values raw, Holm and Benjamini-Hochberg adjusted across the
    run's comparisons), and wins/ties/losses: languages where a needs fewer, as many, more
    tokens than b. Items are also attributes (c.delta_gini)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def swapped(self):
        """The same comparison read as b against a."""
        c = Comparison(self)
        c["a"], c["b"] = self["b"], self["a"]
        c["delta_gini"] = -self["delta_gini"]
        if self.get("interval") is not None:
            c["interval"] = [-self["interval"][1], -self["interval"][0]]
        c["wins"], c["losses"] = self["losses"], self["wins"]
        return c


class Report:
    """An evaluation's numbers. By tokenizer label and language:

    - mean_tokens[label][lang], premium[label][lang], tokens_per_byte, tokens_per_char,
      bytes_per_token (same shape);
    - gini[label], variance[label], theil_t[label], theil_l[label] over the non-reference premiums;
    - vocabulary[label], round_trip[label], groups[label];
    - compare(a, b): a Comparison; comparisons: all of the run's.

    save(folder) writes report.json, report.md, report.html and the plots."""

    def __init__(self, data, delta_samples=None):
        self.data = data
        self.delta_samples = delta_samples or {}
        self.labels = [t["label"] for t in data["tokenizers"]]
        res = data["results"]

        def per_language(key):
            return {lab: {lang: v[key] for lang, v in res[lab]["languages"].items()} for lab in self.labels}
        self.mean_tokens = per_language("mean_tokens")
        self.premium = per_language("premium")
        self.tokens_per_byte = per_language("tokens_per_byte")
        self.tokens_per_char = per_language("tokens_per_char")
        self.bytes_per_token = per_language("bytes_per_token")
        for key in ("gini", "variance", "theil_t", "theil_l"):
            setattr(self, key, {lab: res[lab][key] for lab in self.labels})
        self.vocabulary = {lab: res[lab]["vocabulary"] for lab in self.labels}
        self.round_trip = {lab: res[lab]["round_trip"] for lab in self.labels}
        self.groups = {lab: res[lab]["groups"] for lab in self.labels}
        self.comparisons = [Comparison(c) for c in data["comparisons"]]
        self.reference = data["reference"]
        self.languages = list(data["languages"])

    def __repr__(self):
        return "<supertok evaluation: %d tokenizers, %d languages, reference %s>" % (
            len(self.labels), len(self.languages), self.reference)

    @classmethod
    def load(cls, path):
        """A Report from its report.json (without the bootstrap samples: no ΔGini histograms)."""
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != "supertok-evaluation":
            raise ValueError("%s: not a supertok evaluation report (report.json)" % path)
        return cls(data)

    def compare(self, a, b):
        """The comparison of tokenizers a and b (either order)."""
        for c in self.comparisons:
            if (c["a"], c["b"]) == (a, b):
                return c
            if (c["a"], c["b"]) == (b, a):
                return c.swapped()
        for lab in (a, b):
            if lab not in self.labels:
                raise KeyError("no tokenizer labelled %r in this report (it has %s)" % (lab, ", ".join(self.labels)))
        raise KeyError("%s and %s were not compared in this run (comparisons=...)" % (a, b))

    def to_json(self):
        return json.dumps(self.data, ensure_ascii=False, indent=1, allow_nan=False) + "\n"

    def to_pandas(self):
        """One row per tokenizer and language: label, lang, script, floor, units, bytes, chars,
        tokens, mean_tokens, premium, tokens_per_byte, tokens_per_char, bytes_per_token."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Report.to_pandas needs pandas: pip install pandas") from None
        rows = []
        for lab in self.labels:
            for lang, v in self.data["results"][lab]["languages"].items():
                facts = self.data["languages"][lang]
                rows.append(dict(label=lab, lang=lang, script=facts["script"], floor=facts["floor"],
                                 units=facts["units"], bytes=facts["bytes"], chars=facts["chars"], **v))
        return pandas.DataFrame(rows)

    # ---- text views ----------------------------------------------------------------------

    def summary(self):
        """The table the command line prints: one row per tokenizer, then the comparisons."""
        lines = []
        head = "%-22s %8s %8s %8s %8s %8s %9s %9s" % ("tokenizer", "Gini", "variance", "Theil-T", "Theil-L",
                                                     "mean π", "tokens", "round-trip")
        lines.append(head)
        for lab in self.labels:
            r = self.data["results"][lab]
            total = sum(v["tokens"] for v in r["languages"].values())
            rt = r["round_trip"]
            lines.append("%-22s %8s %8s %8s %8s %8s %9d %9s" % (
                lab[:22], _r(r["gini"]), _r(r["variance"]), _r(r["theil_t"]), _r(r["theil_l"]),
                _r(r["mean_premium"], 3), total, "ok" if not rt["failed"] else "%d bad" % rt["failed"]))
        if self.comparisons:
            lines.append("")
            lines.append("%-34s %9s %21s %10s %9s %9s %11s" % ("comparison (a - b)", "ΔGini", "95% interval",
                                                              "Wilcoxon p", "Holm", "BH", "win/tie/loss"))
            for c in self.comparisons:
                iv = c.get("interval")
                lines.append("%-34s %9s %21s %10s %9s %9s %11s" % (
                    ("%s - %s" % (c["a"], c["b"]))[:34], "%+.4f" % c["delta_gini"],
                    "[%+.4f, %+.4f]" % tuple(iv) if iv else "—", _p(c["wilcoxon"]["pvalue"]),
                    _p(c["p_holm"]), _p(c["p_bh"]), "%d/%d/%d" % (c["wins"], c["ties"], c["losses"])))
        corpus = self.data["corpus"]
        lines.append("")
        lines.append("%d languages, reference %s; %s" % (len(self.languages), self.reference, _corpus_line(corpus)))
        return "\n".join(lines)

    def markdown(self, plots=()):
        return _markdown(self, plots)

    def html(self, plots=()):
        return _html(self, plots)

    def save(self, folder):
        """Write report.json, report.md, report.html and the plots (PNG, with matplotlib) into
        folder (made if missing). Returns the paths written."""
        from .._output import write
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        written = []
        plots = []
        if _plots.available():
            plots = _plots.write_plots(self.data, self.delta_samples, folder)
            written += [os.path.join(folder, name) for name, _ in plots]
        for name, text in (("report.json", self.to_json()), ("report.md", self.markdown(plots)),
                           ("report.html", self.html(plots))):
            path = os.path.join(folder, name)
            write(path, text.encode("utf-8"))
            written.append(path)
        return written


def _p(p):
    if p is None:
        return "—"
    return "%.2e" % p if p < 1e-3 else "%.4f" % p


def _corpus_line(corpus):
    s = "%s (%s, %d units%s)" % (corpus["source"], corpus["layout"], corpus["units"],
                                 ", aligned" if corpus["aligned"] else ", not aligned")
    if corpus.get("dropped_units"):
        s += "; %d units dropped: %s" % (corpus["dropped_units"], corpus["dropped_why"])
    return s


def _tables(report):
    """(title, header, rows) of every table, shared by the Markdown and HTML views."""
    d = report.data
    labels = report.labels
    out = [("Dispersion of the token premiums (non-reference languages)",
            ["tokenizer", "Gini", "variance", "Theil-T", "Theil-L", "mean premium", "tokens", "round-trip failures"],
            [[lab, _r(d["results"][lab]["gini"]), _r(d["results"][lab]["variance"]), _r(d["results"][lab]["theil_t"]),
              _r(d["results"][lab]["theil_l"]), _r(d["results"][lab]["mean_premium"], 3),
              str(sum(v["tokens"] for v in d["results"][lab]["languages"].values())),
              str(d["results"][lab]["round_trip"]["failed"])] for lab in labels])]
    if report.comparisons:
        out.append(("Comparisons (a − b; wins are languages where a needs fewer tokens)",
                    ["a", "b", "ΔGini", "95% interval", "Wilcoxon W", "p", "p (Holm)", "p (BH)", "wins", "ties", "losses"],
                    [[c["a"], c["b"], "%+.4f" % c["delta_gini"],
                      "[%+.4f, %+.4f]" % tuple(c["interval"]) if c.get("interval") else "—",
                      "%g" % c["wilcoxon"]["statistic"], _p(c["wilcoxon"]["pvalue"]), _p(c["p_holm"]), _p(c["p_bh"]),
                      str(c["wins"]), str(c["ties"]), str(c["losses"])] for c in report.comparisons]))
    groups = sorted({g for lab in labels for g in d["results"][lab]["groups"]["floor"]})
    out.append(("Mean premium by encoding-floor group (UTF-8 bytes of the dominant script)",
                ["group", "languages"] + labels,
                [["%s-byte" % g, str(d["results"][labels[0]]["groups"]["floor"][g]["languages"])]
                 + [_r(d["results"][lab]["groups"]["floor"][g]["mean_premium"], 3) for lab in labels] for g in groups]))
    scripts = sorted({s for lab in labels for s in d["results"][lab]["groups"]["script"]})
    out.append(("Mean premium by script", ["script", "languages"] + labels,
                [[s, str(d["results"][labels[0]]["groups"]["script"][s]["languages"])]
                 + [_r(d["results"][lab]["groups"]["script"][s]["mean_premium"], 3) for lab in labels] for s in scripts]))
    out.append(("Vocabulary use on this corpus (and on the training text, where the model has its token counts)",
                ["tokenizer", "ordinary tokens", "used", "active utilization", "merges", "dead merges",
                 "training text: active utilization, dead merges", "merge depth (share)"],
                [[lab, str(v["ordinary"]), str(v["used"]), "%.1f%%" % (100 * v["active_utilization"]),
                  str(v["merges"]), str(v["dead_merges"]),
                  "%.1f%%, %d" % (100 * v["training"]["active_utilization"], v["training"]["dead_merges"])
                  if v.get("training") else "—", _depths(v["depth_histogram"])]
                 for lab, v in ((lab, d["results"][lab]["vocabulary"]) for lab in labels)]))
    langs = report.languages
    out.append(("Per language: mean tokens per unit (premium)",
                ["language", "script", "floor", "units"] + labels,
                [[lang, str(d["languages"][lang]["script"]), str(d["languages"][lang]["floor"]),
                  str(d["languages"][lang]["units"])]
                 + ["%.1f (%.2f)" % (report.mean_tokens[lab][lang], report.premium[lab][lang]) for lab in labels]
                 for lang in langs]))
    out.append(("Per language: bytes per token", ["language"] + labels,
                [[lang] + ["%.2f" % report.bytes_per_token[lab][lang] if report.bytes_per_token[lab][lang] else "—"
                           for lab in labels] for lang in langs]))
    return out


def _depths(hist):
    if not hist:
        return "— (a rank vocabulary records no merge rules)"
    total = sum(hist.values())
    return ", ".join("%s: %.1f%%" % (k, 100 * v / total) for k, v in sorted(hist.items(), key=lambda kv: int(kv[0])))


def _notes(report):
    d = report.data
    notes = ["Token premium π(ℓ) = mean tokens per unit of ℓ / mean tokens per unit of the reference (%s); Gini, "
             "variance (N − 1), Theil-T and Theil-L are over the %d non-reference premiums (the UBE paper, §3 and "
             "Appendix E.1)." % (report.reference, len(report.languages) - 1),
             "Corpus: " + _corpus_line(d["corpus"]) + "."]
    if d["corpus"].get("note"):
        notes.append("Note: " + d["corpus"]["note"] + ".")
    if report.comparisons:
        notes.append("ΔGini intervals: paired language bootstrap, %d resamples of the non-reference languages (the "
                     "same indices for every tokenizer), seed %d, percentile 95%%. Wilcoxon: two-sided signed-rank "
                     "test over the %d languages' mean token counts (reference included); Holm and "
                     "Benjamini-Hochberg adjust across the %d comparisons of this run."
                     % (d["bootstrap"], d["seed"], len(report.languages), len(report.comparisons)))
    for lab in report.labels:
        rt = d["results"][lab]["round_trip"]
        if rt["failed"]:
            notes.append("%s: %d of %d units do not decode back to their text: report.json lists the first %d."
                         % (lab, rt["failed"], rt["units"], len(rt["failures"])))
    return notes


def _markdown(report, plots):
    d = report.data
    out = ["# Tokenizer evaluation", ""]
    out += ["- " + n for n in _notes(report)]
    out.append("- Made by supertok %s (%s backend)." % (d["supertok"], d["backend"]))
    out.append("")
    if plots:
        for name, caption in plots:
            out += ["![%s](%s)" % (caption, name), "", "*%s*" % caption, ""]
    else:
        out += ["*%s.*" % _plots.MISSING, ""]
    for title, head, rows in _tables(report):
        out += ["## " + title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        out.append("")
    return "\n".join(out)


def _html(report, plots):
    d = report.data
    e = html.escape
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>Tokenizer evaluation</title>",
           "<style>body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child"
           "{text-align:left}figure{margin:1em 0}</style></head><body>", "<h1>Tokenizer evaluation</h1>", "<ul>"]
    out += ["<li>%s</li>" % e(n) for n in _notes(report)]
    out.append("<li>Made by supertok %s (%s backend).</li></ul>" % (e(d["supertok"]), e(d["backend"])))
    if plots:
        for name, caption in plots:
            out.append("<figure><img src=\"%s\" alt=\"%s\"><figcaption>%s</figcaption></figure>"
                       % (e(name), e(caption), e(caption)))
    else:
        out.append("<p><em>%s.</em></p>" % e(_plots.MISSING))
    for title, head, rows in _tables(report):
        out.append("<h2>%s</h2><table><tr>%s</tr>" % (e(title), "".join("<th>%s</th>" % e(h) for h in head)))
        out += ["<tr>%s</tr>" % "".join("<td>%s</td>" % e(c) for c in row) for row in rows]
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
