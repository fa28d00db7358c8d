"""Key types of an experiment TOML file, checked before anything runs.

A bad file gets one line naming the file and the key:
`pario: error: my.toml: test[2].layout: 'spiral' is unknown: use ...`.
The keys common to every experiment are checked here; each study kind
declares its own keys with the same `Type`s (docs/presets.md lists them)."""

import re
from dataclasses import dataclass

from .errors import UsageError
from .units import parse_size


class PresetError(UsageError):
    def __init__(self, path, key, why):
        super().__init__(f"{path}: {key}: {why}: see docs/presets.md for the file's keys")


@dataclass(frozen=True)
class Type:
    """What a key holds: a name for messages and a check of one value."""
    name: str
    check: object   # value -> None, or a reason it is wrong

    def validate(self, path, key, value):
        why = self.check(value)
        if why:
            raise PresetError(path, key, why)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _string(v):
    return None if isinstance(v, str) else f"{_shown(v)} is not a string (write it in quotes)"


# A test's or figure's id names files (run1-<id>-write.png) and is picked
# by `--tests a,b`: no path separator, comma, space or control character.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _id(v):
    if not isinstance(v, str):
        return f"{_shown(v)} is not a string (write it in quotes)"
    if not _ID.fullmatch(v) or ".." in v:
        return (f"{_shown(v)} cannot name files and --tests: use letters, digits, '-', '_' and '.' "
                "(at most 64, starting with a letter or digit), e.g. \"my-test\"")
    return None


def _line(v):
    """A name printed in every table, list and report: one line of
    printable text (a newline splits `pario list`'s row; a control
    character reaches the terminal raw), not empty."""
    if not isinstance(v, str):
        return f"{_shown(v)} is not a string (write it in quotes)"
    if not v.strip() or not v.isprintable():
        return f"{_shown(v)} is not a line of printable text: write one, e.g. \"my-study\""
    return None


def _boolean(v):
    return None if isinstance(v, bool) else f"{_shown(v)} is not true or false"


def _positive(v):
    return None if _is_int(v) and v > 0 else f"{_shown(v)} is not a whole number of at least 1"


def _count(v):
    return None if _is_int(v) and v >= 0 else f"{_shown(v)} is not a whole number of at least 0"


def _size(v):
    if _is_int(v) and v < 0:  # no unit makes it a size
        return f"{v} is no size (below 0): write a size in quotes with its unit, e.g. \"4k\" or \"1m\""
    if _is_int(v):  # 128 meant as 128m would be taken as 128 bytes: say so here
        # a small one was likely meant in MiB (128 for 128m), a large one in bytes
        meant = f"\"{v}m\" (or \"{v}\" for bytes)" if v < 1 << 20 else f"\"{v}\" for bytes"
        return (f"{v} is a bare number (it would be {v} bytes): write the size in quotes, e.g. {meant}")
    if not isinstance(v, str):
        return f"{_shown(v)} is not a size such as \"4k\" or \"1m\""
    try:
        parse_size(v)
    except UsageError:
        return f"{_shown(v)} is not a size such as \"4k\" or \"1m\""
    return None


def _list_of(item):
    def check(v):
        if not isinstance(v, list) or not v:
            return f"{_shown(v)} is not a non-empty list, e.g. [{item.name}, ...]"
        for i, x in enumerate(v):
            why = item.check(x)
            if why:
                return f"entry {i + 1}: {why}"
        return None
    return Type(f"list of {item.name}s", check)


def _table(v):
    return None if isinstance(v, dict) else f"{_shown(v)} is not a table of keys"


def _shown(v):
    """A value as the user wrote it in TOML (true, not Python's True)."""
    text = _toml(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    return repr(v)


STRING = Type("string", _string)
ID = Type("id", _id)
LINE = Type("line of text", _line)
BOOL = Type("boolean", _boolean)
POSITIVE = Type("whole number", _positive)
COUNT = Type("whole number (0 or more)", _count)
SIZE = Type("size", _size)
TABLE = Type("table", _table)
STRINGS = _list_of(STRING)
POSITIVES = _list_of(POSITIVE)
COUNTS = _list_of(COUNT)
SIZES = _list_of(SIZE)


def one_of(*choices):
    def check(v):
        if not isinstance(v, str):
            return f"{_shown(v)} is not a string"
        if v not in choices:
            return f"'{v}' is unknown: use one of {', '.join(choices)}"
        return None
    return Type("one of " + "/".join(choices), check)


def string_or_strings(v):
    if isinstance(v, str):
        return None
    return STRINGS.check(v)


NAMES = Type("string or list of strings", string_or_strings)


def check_table(path, where, table, keys, required=()):
    """Every key of `table` known and of its type; every required key there."""
    for key in required:
        if key not in table:
            raise PresetError(path, f"{where}{key}", "missing (required)")
    for key, value in table.items():
        t = keys.get(key)
        if t is None:
            raise PresetError(path, f"{where}{key}",
                              f"unknown key: use one of {', '.join(sorted(keys)) or 'none here'}")
        t.validate(path, f"{where}{key}", value)
