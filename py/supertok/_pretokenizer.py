"""The pre-tokenizer's arguments as the core takes them, checked in one place for pretokenize,
encodings and train: the pattern's name, script_aware and scripts."""
from ._catalogue import PATTERNS
from ._status import SupertokError, argument_error

SCRIPT_AWARE = 1  # ST_PRETOK_SCRIPT_AWARE


def options(pattern, script_aware, scripts):
    """(the core's pattern id, its flags, the scripts as its comma-separated list or None for the
    default set); ValueError / TypeError naming the argument otherwise."""
    try:
        pid = PATTERNS[pattern]
    except (KeyError, TypeError):
        raise argument_error("pattern", "unknown pattern %r: choose one of %s"
                             % (pattern, ", ".join(sorted(PATTERNS)))) from None
    if not isinstance(script_aware, bool):
        raise TypeError("script_aware must be True or False, not %r" % (script_aware,))
    if scripts is not None and not script_aware:
        raise argument_error("scripts", "scripts=%r applies only with script_aware=True (it names the scripts split "
                             "one letter per piece in script-aware mode); pass script_aware=True, or drop scripts"
                             % (scripts,))
    return pid, SCRIPT_AWARE if script_aware else 0, scripts_spec(scripts)


def scripts_spec(scripts):
    """The scripts argument as the core's comma-separated list (None: the default set)."""
    if scripts is None:
        return None
    if isinstance(scripts, str):
        scripts = [scripts]
    names = list(scripts)
    for s in names:
        if not isinstance(s, str) or "," in s or not s.strip():
            raise argument_error("scripts", "script names must be non-empty strings without commas, got %r" % (s,))
    return ",".join(names).encode("utf-8", "surrogatepass")  # the names as given, for the message


def named_script_error(exc, spec):
    """The core's ST_ERR_UNKNOWN_SCRIPT (offset and length: the name in spec) as the ValueError
    naming the script; any other error as it is."""
    if isinstance(exc, SupertokError) and exc.name == "ST_ERR_UNKNOWN_SCRIPT" and exc.offset is not None:
        bad = spec[exc.offset:exc.offset + exc.length].decode("utf-8", "surrogatepass")
        return argument_error("scripts", "unknown script name %r" % bad)
    return exc
