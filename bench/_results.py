"""Entries in bench/RESULTS.md: one copy of each benchmark table, with the command and the date
it came from.

An entry is a level-2 section headed "## NAME, DATE" (NAME: the script, and what it measured when
one script makes several kinds of table, e.g. "train.py (superwords)"). A script writes its entry
with write_entry: the entry with the same NAME, an earlier run's, is replaced where it stands, so
the file keeps one copy of each table; an entry not there yet is appended. Sections whose heading
is no script's NAME (notes on what was tried) are kept as they are.

run_and_record wires a script's main in: everything the script prints on standard output (its
markdown tables; progress goes to standard error) is shown as usual and, unless the run is a smoke
run (--quick) or --no-results is given, becomes the body of its entry.
"""
import contextlib
import datetime
import io
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
HEADER = ("# Benchmark results\n\n"
          "Written by the scripts in bench/ (bench/README.md says what each measures): each entry is the\n"
          "command, the date and the machine it ran on, then the tables it printed. A script that runs\n"
          "again replaces its own entry. Measured on a 2-core machine shared with other work: compare\n"
          "ratios within one entry, not absolute figures across entries.\n")


def machine():
    """The platform, CPU model, core count and Python version, for an entry's header."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %s, %d cores, Python %s" % (platform.platform(), cpu, os.cpu_count(), platform.python_version())


def command_line(script, argv):
    """The command as a user types it from the repository root."""
    return " ".join(["python", "bench/" + os.path.basename(script)] + list(argv))


def entry(name, command, body, when=None):
    """The text of one entry: heading, command, machine, body."""
    when = when or datetime.datetime.now()
    try:
        import supertok
        version = "; supertok %s" % getattr(supertok, "__version__", "?")
    except ImportError:
        version = ""
    return ("## %s, %s\n\n`%s`\n\n%s%s\n\n%s\n"
            % (name, when.strftime("%Y-%m-%d %H:%M"), command.strip(), machine(), version, body.strip("\n")))


def _split(text):
    """The file's preamble and its level-2 sections, each section's text starting with "## "."""
    parts = text.split("\n## ")
    return parts[0], ["## " + p for p in parts[1:]]


def write_entry(name, command, body, path=RESULTS, when=None):
    """Put the entry NAME in the results file in place of its earlier one (or at the end), the other
    sections unchanged. Written to a temporary file and renamed over it."""
    new = entry(name, command, body, when)
    text = HEADER
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    head, sections = _split(text)
    mine = "## %s, " % name
    out, placed = [], False
    for s in sections:
        if s.startswith(mine):
            if not placed:
                out.append(new)
                placed = True
            continue  # a second copy of the same table is dropped
        out.append(s)
    if not placed:
        out.append(new)
    text = "\n".join(p.rstrip("\n") + "\n" for p in [head] + out)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


class _Tee(io.TextIOBase):
    """Standard output that is also kept, for the entry's body."""

    def __init__(self, out):
        self.out, self.kept = out, io.StringIO()

    def write(self, s):
        self.kept.write(s)
        return self.out.write(s)

    def flush(self):
        self.out.flush()

    def reconfigure(self, **kw):
        """The options go to the standard output underneath (encode.py asks for line buffering)."""
        reconfigure = getattr(self.out, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(**kw)


def run_and_record(main, name, argv=None, skip=("--quick", "--worker", "--serve", "-h", "--help")):
    """Run main() with standard output kept; then, unless argv holds --no-results or a flag of
    SKIP (a smoke run, a worker process the script starts, help), or main failed, write what it
    printed as the entry NAME (a str, or a function of argv). --no-results is taken out of
    sys.argv before main parses it. Returns main's return value."""
    if "--no-results" in sys.argv:
        sys.argv = [a for a in sys.argv if a != "--no-results"]
        return main()
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in skip for a in argv):
        return main()  # a worker's standard output may be its protocol: left alone
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        status = main()
    if not status:
        key = name(argv) if callable(name) else name
        path = write_entry(key, command_line(sys.argv[0], argv), tee.kept.getvalue())
        print("wrote the entry \"%s\" in %s" % (key, os.path.relpath(path, ROOT)), file=sys.stderr)
    return status


def option_value(argv, option, default=None):
    """The value given to OPTION in argv ("--opt V" or "--opt=V"), else default."""
    for i, a in enumerate(argv):
        if a == option and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(option + "="):
            return a.split("=", 1)[1]
    return default


def keyed(script, options=(), flags=()):
    """A function of argv naming a script's entry: the script, then those of OPTIONS (each with
    its value) and FLAGS the command gives, in the command's order. The options that choose what
    is measured belong here; those that only repeat it (rounds, timeouts, folders) do not, so a
    run with more rounds replaces the entry of the same tables."""
    def key(argv):
        parts, i = [script], 0
        while i < len(argv):
            a = argv[i]
            opt = a.split("=", 1)[0]
            if opt in options:
                if "=" in a:
                    parts.append(a)
                elif i + 1 < len(argv):
                    parts.append("%s %s" % (a, argv[i + 1]))
                    i += 1
            elif a in flags:
                parts.append(a)
            i += 1
        return " ".join(parts)
    return key
