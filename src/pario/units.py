"""Sizes as users write them: 4k, 64k, 1m, 2g (powers of 1024), the same
rules as the engine's."""

import math
import re

from .errors import UsageError

_UNITS = {"": 0, "b": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
_SIZE = re.compile(r"^(\d+)([kmgtpb]?)(i?b)?$", re.IGNORECASE)


def parse_size(text, what="size"):
    """'64k' -> 65536; refuses zero, negatives, fractions and unknown units."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE.match(str(text).strip())
        if not match and _SIZE.match(str(text).strip().lstrip("-")):
            raise UsageError(f"{what} '{text}': a size must be positive: use forms like 4k, 1m, 2g")
        if not match:
            raise UsageError(f"{what} '{text}' is not a size: use forms like 4k, 1m, 2g")
        value = int(match.group(1)) << _UNITS[match.group(2).lower()]
    if value <= 0:
        raise UsageError(f"{what} '{text}' must be greater than zero")
    if value >= 1 << 63:
        raise UsageError(f"{what} '{text}' is beyond 64-bit file offsets: use at most 8191p")
    return value


# A time shown in the unit that makes its largest value at least 1 (a
# barrier of 1.3e-07 s reads 134 ns; T_T stays in seconds).
_TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def time_unit(seconds):
    """(unit, seconds per unit) for showing times of which `seconds` is
    the largest: s, ms, µs or ns."""
    for unit, scale in _TIME_UNITS:
        if abs(seconds) >= scale:
            return unit, scale
    return _TIME_UNITS[-1]


def format_size(n):
    """65536 -> '64 KiB': the largest unit that divides exactly."""
    for unit in ("PiB", "TiB", "GiB", "MiB", "KiB"):
        scale = 1 << {"KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40, "PiB": 50}[unit]
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def engine_size(n):
    """The shortest form the engine parses: 65536 -> '64k'."""
    for suffix, shift in (("t", 40), ("g", 30), ("m", 20), ("k", 10)):
        if n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def format_value(value, fmt=".1f"):
    """A measured value in its quantity's format ('.1f'), or, where that
    would print a non-zero value as zero ('0.0' MiB/s for a 64-byte run),
    with two significant digits in fixed notation ('0.0061'): a rate shown
    as zero says nothing.  The engine prints its rates by the same rule
    (rate_format in engine/src/util/sizes.c)."""
    text = format(value, fmt)
    if not value or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        return text
    digits = re.fullmatch(r".*\.(\d+)g", fmt)
    if digits and "e" in text:
        # never scientific ('1.865e+04'): the same significant digits, fixed
        decimals = int(digits.group(1)) - 1 - math.floor(math.log10(abs(value)))
        return f"{value:.{max(0, decimals)}f}"
    if float(text) == 0:
        decimals = 1 - math.floor(math.log10(abs(value)))
        return f"{value:.{decimals}f}"
    return text


def on_its_side(value, inside, decimals=2, most=6):
    """`value` with `decimals` decimals (format_value), or with more where
    that rounding would cross the line `inside` draws (a ratio of 0.747,
    outside 25 %, that would read 0.75; 10.02x, beyond a 10x threshold, that
    would read 10.0x): the first rounding `inside` judges as it judges the
    value, else every digit it has."""
    judged = inside(value)
    for n in range(decimals, most + 1):
        shown = format_value(value, f".{n}f")
        if inside(float(shown)) == judged:
            return shown
    return f"{value:.12g}"
