"""The one figure description: what a figure of a run shows, which drives
both its text table and its PNG plot.

A study kind turns each stored result into `Record`s: the parameters of
what was measured (ranks, block, api, phase, class, ...) and the measured
values (every trial of a rate, a time, ...).  A `Figure` picks records by
parameter values (`where`), puts one parameter on the x axis, splits the
rest into series by another parameter (or a tuple of them), and shows one
measured quantity, best of the pooled trials, with the min-median spread
at hand:

    Figure(id="partitioned-read", number="Figure 7",
           title="Partitioned Read ({size} file)",
           where={"test": "partitioned", "phase": "read"},
           x="ranks", series="block", y="rate")

    Figure(id="rate-vs-block", title="Rate by request size",
           where={"phase": "write"}, x="block", series="api", y="rate")

`title` may name any parameter in braces; it is filled when every record
of the figure agrees on it.  `normalise` divides each series by its own
baseline, the best of its records with the given parameter values (the
ASCI Red report's Figure 3: rate under load / rate alone):

    Figure(id="fig3", title="Write under load", x="background", series="title",
           y="rate", normalise={"background": 0}, annotate="load")

and `annotate` shows a second quantity beside each cell (the median of its
trials): the load measured at each loader count.  Quantities (`Quantity`) and parameters
(`Param`) are declared by the kinds; `units` converts a quantity's values
for display (a rate kept in MiB/s shown as bytes/s, say).

`split_varying(figure, records, params)` gives one figure per value of
any parameter that varies inside one cell but is neither x nor series (a
run over 1 and 2 ranks of a figure by request size);
`build(figure, records, params, quantities)` gives a `FigureData`;
`format_table(data)` prints it; `plot.plot_figure(data, ...)` draws it.
"""

import string
import statistics
from dataclasses import dataclass, field, replace

from .units import format_size, format_value

# Display units: (quantity unit, shown unit) -> factor on the values.
_CONVERT = {
    ("MiB/s", "MiB/s"): 1.0,
    ("MiB/s", "MB/s"): 1048576 / 1e6,
    ("MiB/s", "bytes/s"): 1048576.0,
    ("MiB/s", "GiB/s"): 1 / 1024,
    ("bytes/s", "bytes/s"): 1.0,
    ("bytes/s", "MiB/s"): 1 / 1048576,
    ("bytes/s", "MB/s"): 1e-6,
    ("s", "s"): 1.0,
    ("s", "ms"): 1e3,
}


def can_show(have, unit):
    """Whether a quantity kept in `have` can be shown in `unit`."""
    return have == unit or (have, unit) in _CONVERT


def units_for(have):
    return sorted({have} | {u for h, u in _CONVERT if h == have})


@dataclass(frozen=True)
class Quantity:
    """A measured quantity: its label, unit, and which trial is best."""
    label: str
    unit: str
    better: str = "max"          # "max" (rates) or "min" (times)
    fmt: str = ".1f"
    # True: each record gives the value its own name and unit (the probe's
    # components: MiB/s, seconds, per second), through its kind's `measures`
    per_record: bool = False


@dataclass(frozen=True)
class Param:
    """A parameter that can be an axis or a series: label, how its values
    print, the axis scale it suits ("log2", "linear" or "category"), and
    optionally its known values in a fixed order, so that as a series each
    value keeps one colour in every plot of every run.  The same
    description names the parameter in `pario compare`'s rows."""
    label: str
    fmt: object = str
    scale: str = "category"
    order: tuple = ()
    # Whether a row label (`pario compare`) puts the label before the value
    # ("block 64 KiB"); False for values that name themselves ("G=2").
    named: bool = True
    # The unit of the stored value, for a column's name in `pario export`
    # (block_bytes); "" when the value is a count or a name.
    unit: str = ""


def size_param(label):
    return Param(label, format_size, "log2", unit="bytes")


@dataclass
class Record:
    """One measured thing: its parameters and every trial of each value."""
    params: dict
    values: dict                # quantity key -> list of floats


@dataclass
class Figure:
    id: str                      # file stem of its PNG
    title: str
    x: str
    y: str
    series: object = None        # a parameter name, a tuple of names, or None
    where: dict = field(default_factory=dict)  # param -> value or list of values
    number: str = ""             # the report's figure number, e.g. "Figure 7"
    unit: str = ""               # display unit; "" = the quantity's own
    spread: bool = True          # table cells show best [min-median]; plots error bars
    lines: tuple = ()            # ((y, label), ...) reference lines
    note: str = ""               # appended to the heading, e.g. "fsync before close"
    log_y: bool = False
    normalise: dict = field(default_factory=dict)  # param -> value of each series' baseline
    annotate: str = ""           # a quantity shown beside each cell (its median)
    # False: a table only (the ASCI Red report's Tables 2 and 3), never drawn
    # as a plot; a figure of the same numbers draws them (its Figure 10)
    plot: bool = True
    # Tests drawn only beside the figure's others, as a reference (ASCI Red's
    # independent calls beside its collective ones): a run of those alone
    # leaves the figure out, as its title names what did not run
    beside: tuple = ()

    def only_beside(self, records):
        """Whether every one of `records` is of a reference test."""
        return bool(self.beside) and bool(records) and all(r.params.get("test") in self.beside
                                                           for r in records)

    def selects(self, record, planned=False):
        """Whether the figure shows this record.  planned: the record is a
        point of a plan, whose parameters that only a result gives (the
        file system, the MPI-IO mode) are not known yet and select all."""
        for k, want in self.where.items():
            if planned and k not in record.params:
                continue
            have = record.params.get(k)
            if isinstance(want, (list, tuple)):
                if have not in want:
                    return False
            elif have != want:
                return False
        return True


@dataclass
class Cell:
    values: list

    def best(self, better):
        return max(self.values) if better == "max" else min(self.values)

    def worst(self, better):
        return min(self.values) if better == "max" else max(self.values)

    @property
    def median(self):
        return statistics.median(self.values)


@dataclass
class FigureData:
    figure: Figure
    heading: str
    quantity: Quantity
    unit: str
    x_param: Param
    series_label: str
    xs: list
    series: list                 # series keys, in order of first appearance
    cells: dict                  # (x, series key) -> Cell (values in display unit)
    trials: int
    x_labels: dict
    series_labels: dict
    palette_order: list = field(default_factory=list)   # labels to colour first, in order
    # Curves drawn under the measured ones, each (label, [(x, y), ...]):
    # the ideal curve of the CFS report's Figure 3 (pario.explain).
    curves: list = field(default_factory=list)
    annotations: dict = field(default_factory=dict)   # (x, series key) -> "load 1.93"
    # Series labels that name every value, for text that quotes one cell
    # away from its column head (a finding: "aggregators 1, ranks 2").
    series_names: dict = field(default_factory=dict)
    # The model's numbers, not trials of a measurement: no "best of N".
    predicted: bool = False

    @property
    def name(self):
        return self.figure.id

    @property
    def trials_text(self):
        """What each value is, for every table and plot of the figure: the
        best of N trials, one trial, or a prediction (a model's iterations
        are not trials of a noisy measurement)."""
        if self.predicted:
            return "predicted"
        return f"best of {self.trials}" if self.trials > 1 else "one trial"

    @property
    def columns_text(self):
        """The note 'columns: ranks' when a table's column heads are bare
        values of the series ("1", "2", "4"): the table says it; a plot's
        legend names them by its title, so it is never drawn into a plot."""
        bare = any(self.series_labels.get(s) != self.series_names.get(s, self.series_labels.get(s))
                   for s in self.series)
        return f"columns: {self.series_label}" if bare and self.series_label else ""

    @property
    def shows_spread(self):
        """Whether cells and plots show the trials' spread: a prediction has none."""
        return self.figure.spread and not self.predicted

    @property
    def shows_ranges(self):
        """Whether any cell of its table carries a [a-b] range: a cell of
        one trial has none, so a table of single trials gets no legend."""
        return self.shows_spread and any(len(c.values) > 1 for c in self.cells.values())

    def best(self, x, s):
        c = self.cells.get((x, s))
        return None if c is None else c.best(self.quantity.better)


def _key(record, names):
    if names is None:
        return ""
    if isinstance(names, str):
        return record.params.get(names)
    return tuple(record.params.get(n) for n in names)


def _label(key, names, params, name_all=False):
    """A series' label: its values, each as its parameter prints it.  In a
    label of several values a number is named ("ranks 2, shared, atomic"):
    a bare "2" says nothing.  A single value is named by its column head,
    unless name_all (a label read alone, as a finding's)."""
    if names is None:
        return ""
    if isinstance(names, str):
        if key is None:
            return "-"
        names, key = (names,), (key,)
        if not name_all:
            return params.get(names[0], Param(names[0])).fmt(key[0])
    return ", ".join(_named(params.get(n, Param(n)), v) for n, v in zip(names, key) if v is not None)


def _named(param, value):
    """A value as a label part: named when it prints as a bare number ("2"
    -> "ranks 2"); "64 KiB" or "shared" say what they are already."""
    text = param.fmt(value)
    bare = text.replace(".", "", 1).lstrip("-").isdigit()
    return f"{param.label} {text}" if param.named and bare else text


def _sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def build(figure, records, params, quantities, predicted=""):
    """The figure's data from the run's records, or None if none match.
    `predicted` labels a model's run ("predicted: model of ..."): its
    heading says so, and its values are not trials."""
    quantity = quantities[figure.y]
    unit = figure.unit or quantity.unit
    factor = 1.0 if unit == quantity.unit else _CONVERT.get((quantity.unit, unit))
    if factor is None:
        raise ValueError(f"figure {figure.id}: cannot show {quantity.unit} as {unit}")
    cells, order, trials, extra = {}, [], 0, {}
    mine = [r for r in records if figure.selects(r) and r.values.get(figure.y)]
    if figure.only_beside(mine):
        return None
    for r in mine:
        x, s = r.params.get(figure.x), _key(r, figure.series)
        if x is None:
            continue
        vals = [v * factor for v in r.values[figure.y] if v is not None]
        if not vals:
            continue
        cells.setdefault((x, s), Cell([])).values.extend(vals)
        if figure.annotate:
            extra.setdefault((x, s), []).extend(v for v in r.values.get(figure.annotate, []) if v is not None)
        if s not in order:
            order.append(s)
    note = figure.note
    if figure.normalise:
        quantity, unit, dropped = _normalised(figure, quantity, mine, cells, order, params)
        if dropped:
            missing = ", ".join(_label(s, figure.series, params) or "(all)" for s in dropped)
            note = "; ".join(n for n in (note, f"no baseline, left out: {missing}") if n)
    if not cells:
        return None
    trials = max(len(c.values) for c in cells.values())
    xs = sorted({x for x, _ in cells}, key=_sort_key)
    if all(isinstance(s, (int, float)) for s in order):
        order.sort()
    x_param = params.get(figure.x, Param(figure.x))
    title = filled_title(figure, mine, params)
    heading = f"{figure.number}. {title}" if figure.number else title
    if predicted:
        heading += f" [{predicted}]"
    if isinstance(figure.series, str):
        series_label = params.get(figure.series, Param(figure.series)).label
    elif figure.series:
        series_label = ", ".join(params.get(n, Param(n)).label for n in figure.series)
    else:
        series_label = ""
    known = params.get(figure.series, Param("")).order if isinstance(figure.series, str) else ()
    if note != figure.note:
        figure = replace(figure, note=note)
    return FigureData(
        figure=figure, heading=heading, quantity=quantity, unit=unit, x_param=x_param,
        series_label=series_label, xs=xs, series=order, cells=cells, trials=trials,
        x_labels={x: x_param.fmt(x) for x in xs},
        series_labels={s: _label(s, figure.series, params) for s in order},
        series_names={s: _label(s, figure.series, params, name_all=True) for s in order},
        palette_order=[_label(v, figure.series, params) for v in known],
        annotations=_annotations(figure, extra, quantities), predicted=bool(predicted))


def _names(series):
    if series is None:
        return ()
    return (series,) if isinstance(series, str) else tuple(series)


# Repeated rounds of one point (every kind names them "trial"): what a
# cell's best-of pools on purpose, so they never split a figure.
POOLED = frozenset({"trial"})


def split_varying(figure, records, params):
    """The figure as drawn from these records: itself, or one figure per
    value of every parameter that varies among the records of one cell
    (same x, same series) but is neither the x axis nor a series: points of
    2 rank counts, or 2 block sizes, are never pooled into one best-of
    cell.  Each part selects its value (`where`) and names it in its title,
    where a `{param}` placeholder names it already or else at the end.  A
    numbered figure's parts are numbered apart (Figure 11a.1, 11a.2 ...):
    one number never heads two figures."""
    mine = [r for r in records if figure.selects(r) and r.values.get(figure.y)]
    cells = {}
    for r in mine:
        cells.setdefault((r.params.get(figure.x), _key(r, figure.series)), []).append(r)
    axes = {figure.x, *_names(figure.series), *figure.where, *POOLED}
    split = sorted({k for rs in cells.values() for r in rs for k in r.params
                    if k not in axes and len({repr(q.params.get(k)) for q in rs}) > 1})
    if not split:
        return [figure]
    combos = sorted({tuple(r.params.get(k) for k in split) for r in mine},
                    key=lambda c: tuple(_sort_key(v) for v in c))
    parts = []
    for i, combo in enumerate(combos, 1):
        named = [(k, v) for k, v in zip(split, combo) if "{" + k + "}" not in figure.title]
        # one name per label: a test's id and its title both say "test"; the title, in words, is kept
        labels = [params.get(k, Param(k)).label for k, _ in named]
        named = [(k, v) for i, (k, v) in enumerate(named) if labels[i] not in labels[i + 1:]]
        title = figure.title
        if named:
            title += " (" + ", ".join(f"{params.get(k, Param(k)).label} "
                                      f"{params.get(k, Param(k)).fmt(v)}" for k, v in named) + ")"
        suffix = "-".join(f"{k}{v}" for k, v in zip(split, combo))
        number = _part_number(figure.number, i, len(combos))
        parts.append(replace(figure, id=f"{figure.id}-{_file_safe(suffix)}", title=title, number=number,
                             where={**figure.where, **dict(zip(split, combo))}))
    return parts


def _part_number(number, i, n):
    """Part i of n of a numbered figure: "Figure 11a" -> "Figure 11a.2";
    a number naming several ("Figures 6 and 7") -> "... (part 2 of 3)"."""
    if not number or n < 2:
        return number
    words = number.split()
    return f"{number}.{i}" if len(words) == 2 else f"{number} (part {i} of {n})"


def _file_safe(text):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def why_left_out(figure, records, params=None, absent=None, planned=False):
    """Why a figure shows nothing of these records, or None when it shows
    something or is simply not part of this run (--tests left its tests
    out).  records: a run's, or with `planned` a plan's points (one record
    per phase, no values).  absent: {parameter: {value: why}} from the kind,
    why values of a parameter the figure selects have no point (a test
    that runs at one block size only, which --blocks left out)."""
    params, absent = params or {}, absent or {}
    mine = [r for r in records if figure.selects(r, planned) and (planned or r.values.get(figure.y))]
    if figure.only_beside(mine):
        others = [t for t in figure.where.get("test", ()) if t not in figure.beside]
        return (f"only its reference test{'s' * (len(figure.beside) > 1)} {', '.join(figure.beside)} "
                f"{'ran' if not planned else 'is in the plan'}: give --tests with "
                f"{' or '.join(others) or 'another of its tests'} too")
    if mine:
        if figure.normalise and not planned:
            at = ", ".join(f"{k} = {v}" for k, v in figure.normalise.items())
            return f"no point has {at} to normalise by"
        return None
    for k, want in figure.where.items():
        wants = list(want) if isinstance(want, (list, tuple)) else [want]
        whys = list(dict.fromkeys(absent[k][w] for w in wants if w in absent.get(k, {})))
        if whys:
            return "; ".join(whys)
    for k, want in figure.where.items():
        if k == "test":
            continue  # tests chosen out (--tests): not part of this run
        others = replace(figure, where={j: w for j, w in figure.where.items() if j != k})
        near = [r for r in records if others.selects(r, planned) and (planned or r.values.get(figure.y))]
        if near:
            p = params.get(k, Param(k))
            wants = list(want) if isinstance(want, (list, tuple)) else [want]
            have = sorted({r.params.get(k) for r in near if r.params.get(k) is not None}, key=_sort_key)
            wanted = " or ".join(p.fmt(w) for w in wants)
            fix = (f"give --{_RUN_OPTIONS[k]} with {' or '.join(_given(p, w) for w in wants)}"
                   if k in _RUN_OPTIONS else f"no option of 'pario run' sets it: the figure's where.{k} "
                   "asks for it")
            this_run = (f" (this run: {', '.join(p.fmt(h) for h in have)})" if have
                        else " (no point of this run has one)")
            return f"no point has {p.label} {wanted}{this_run}: {fix}"
    return None


# The parameters a `pario run` option chooses, and that option: a figure
# left out for want of one of their values names the option to give.
_RUN_OPTIONS = {"block": "blocks", "ranks": "ranks", "size": "size", "group": "groups", "class": "classes"}


def _given(param, value):
    """A value as the command line takes it: 2m, not 2 MiB."""
    if param.unit == "bytes" and isinstance(value, int):
        for suffix, shift in (("g", 30), ("m", 20), ("k", 10)):
            if value % (1 << shift) == 0:
                return f"{value >> shift}{suffix}"
    return str(value)


def _normalised(figure, quantity, records, cells, order, params):
    """Divide each series' cells by its baseline: the best of its records
    whose parameters have the `normalise` values.  A series without one is
    left out (returned, for the heading).  -> (quantity, unit, dropped)"""
    base = {}
    for r in records:
        if all(r.params.get(k) == v for k, v in figure.normalise.items()):
            vals = [v for v in r.values[figure.y] if v is not None]
            s = _key(r, figure.series)
            if vals:
                best = max(vals) if quantity.better == "max" else min(vals)
                have = base.get(s)
                base[s] = best if have is None else (max if quantity.better == "max" else min)(have, best)
    dropped = [s for s in order if not base.get(s)]
    for s in dropped:
        order.remove(s)
    for (x, s) in list(cells):
        if s in dropped:
            del cells[(x, s)]
        else:
            cells[(x, s)] = Cell([v / base[s] for v in cells[(x, s)].values])
    what = quantity.label or figure.y
    at = ", ".join(f"{params.get(k, Param(k)).label} {params.get(k, Param(k)).fmt(v)}"
                   for k, v in figure.normalise.items())
    return (Quantity(f"{what} / {what} at {at}", "", quantity.better, ".2f"), "", dropped)


def _annotations(figure, extra, quantities):
    """(x, series) -> "load 1.93": the annotated quantity's median per cell."""
    if not figure.annotate:
        return {}
    q = quantities[figure.annotate]
    return {k: f"{q.label or figure.annotate} {format_value(statistics.median(v), q.fmt)}"
            for k, v in extra.items() if v}


def filled_title(figure, records, params):
    """The figure's title with each {param} that has one value over
    `records` (its own points, or a whole run's for a figure left out)
    written in; a placeholder of several values (the x axis's) reads
    '...', never '{block}' (a heading or a left-out note is a sentence)."""
    common = {}
    try:  # a kind's own title is not checked as an experiment file's is
        fields = {f for _, f, _, _ in string.Formatter().parse(figure.title) if f}
    except ValueError:
        return figure.title
    for name in fields:  # only the title's own: a plan's records also carry lists (phases)
        try:
            vals = {r.params.get(name) for r in records if name in r.params}
        except TypeError:  # a list-valued fact ({options}): no one value to write in
            continue
        if len(vals) == 1:
            v = vals.pop()
            common[name] = params.get(name, Param(name)).fmt(v) if v is not None else ""
    try:
        return figure.title.format_map(_Missing(common))
    except (ValueError, IndexError):
        return figure.title


class _Missing(dict):
    def __missing__(self, key):
        return "..."


def quantity_text(data):
    """What a figure's values are: "MiB/s", "per-target (scaled) in MiB/s",
    or a unitless label alone ("rate / rate at loaders per node 0")."""
    q = data.quantity
    return f"{q.label} in {data.unit}" if q.label and data.unit else (data.unit or q.label)


def format_table(data):
    """x down the side, one column per series; best of N, and with
    `spread` the min-median range of the trials after it."""
    fig, q = data.figure, data.quantity
    head = f"{data.heading}: {quantity_text(data)}, {data.trials_text}"
    for note in (fig.note, data.columns_text):
        if note:
            head += f"; {note}"
    lines = [head]
    cols = [data.series_labels[s] or q.label for s in data.series]

    def cell(c):
        if c is None:
            return "-"
        text = format_value(c.best(q.better), q.fmt)
        if data.shows_spread and len(c.values) > 1:
            lo, mid = format_value(c.worst(q.better), q.fmt), format_value(c.median, q.fmt)
            text += f" [{lo}-{mid}]" if q.better == "max" else f" [{mid}-{lo}]"
        return text

    def noted(text, key):
        extra = data.annotations.get(key)
        return f"{text} ({extra})" if extra else text

    rows = [[noted(cell(data.cells.get((x, s))), (x, s)) for s in data.series] for x in data.xs]
    width = max([10] + [len(c) + 2 for c in cols] + [len(v) + 2 for r in rows for v in r])
    xw = max([6] + [len(data.x_param.label) + 1] + [len(v) + 1 for v in data.x_labels.values()])
    lines.append(data.x_param.label.rjust(xw) + "".join(c.rjust(width) for c in cols))
    for x, r in zip(data.xs, rows):
        lines.append(data.x_labels[x].rjust(xw) + "".join(v.rjust(width) for v in r))
    if data.shows_ranges:
        lines.append(f"{'':>{xw}}  " + ("[a-b]: the lowest and the median of the trials" if q.better == "max"
                                        else "[a-b]: the median and the highest of the trials"))
    return "\n".join(lines)


def table_rows(data):
    """(head, rows) of a figure's table for renderers other than the plain
    text one (the terminal's and the HTML report's): x down the side, a
    column per series, each cell the best or (best, "[lowest-median]")."""
    q = data.quantity
    head = [data.x_param.label] + [data.series_labels[s] or q.label or data.unit for s in data.series]
    rows = []
    for x in data.xs:
        row = [data.x_labels[x]]
        for s in data.series:
            c = data.cells.get((x, s))
            if c is None:
                row.append("-")
                continue
            best = format_value(c.best(q.better), q.fmt)
            if (x, s) in data.annotations:
                best += f" ({data.annotations[(x, s)]})"
            if data.shows_spread and len(c.values) > 1:
                lo, mid = format_value(c.worst(q.better), q.fmt), format_value(c.median, q.fmt)
                row.append((best, f"[{lo}-{mid}]" if q.better == "max" else f"[{mid}-{lo}]"))
            else:
                row.append(best)
        rows.append(row)
    return head, rows
