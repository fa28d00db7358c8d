"""The one registry of study kinds.

A study kind is what a preset's `kind = "..."` names: `io` (the access
pattern studies: CFS and its descendants) and `bt` (NHT-1 on NPB's BT).
The runner, the CLI, the store and the plotting code name no kind; they
ask the preset's kind.  Adding a kind is one module defining a `Kind`
subclass instance called KIND, plus one line in `_MODULES` below.

What a kind owns (override in the subclass):

* `name`, `description`: the registry key and one line for `pario presets`.
* `options`: `Option`s of `pario run` only this kind takes (the CLI adds
  the union of every kind's options; an option given to a preset whose
  kind does not take it is refused with one line naming the kinds that do.
  Two kinds may declare the same flag with the same meaning).
* `sweep_keys`, `test_keys`: the keys its TOML `[sweep]`/`[quick]` and
  `[[test]]` tables may hold, as {key: schema.Type}; `required_sweep`,
  `required_test`: keys that must be there. `check(preset, path)` adds
  checks types cannot say (an unknown layout...). See docs/presets.md.
* `params`, `quantities`: {name: figures.Param} and {key: figures.Quantity}
  its records carry, so figures can use any of them as an axis or a y;
  `facts`: the names its records and plans carry besides (export columns).
* `describe(preset)`: lines for `pario presets`.
* `plan(preset, options)`: (points, skipped): the engine runs of a run, in
  order; `skipped` holds (point, reason) for points left out.  `options`
  is the dict of `pario run` options (None = not given).
* `plan_notes(preset, points, options)`: lines about a plan, printed
  before it runs (where its rank counts came from, a grouping that
  cannot act...); default none.
* `unused_options(preset, options)`: {flag: why} of generic run options
  given (--ranks, --tests) that the plan would ignore, refused by name.
* `records(point, result)`: a stored point (a dict: its columns and its
  `params`) and its result document -> [figures.Record].
* `finish(records)`: the records of a whole run, for values that need
  several points (BT's zeta against the best T_C); default unchanged.
* `figures(preset, records, options)`: [figures.Figure] to show.
* `tables(preset, records, options)`: extra text tables (default none).
* `notes(preset, records, options)`: warnings derived from a run's
  records (default none); the engine's own warnings are shown anyway.
* `size_setting`: a `SizeSetting`, what sets how much its points write
  (the engine's option, the experiment's key, a `pario run` option if
  any), so every fix pario names for a point that does not fit or is too
  short to time is one the user's command takes; `point_kind(point)`: the
  kind that planned a point (a suite's points: their study's).

What a stored point IS and what it MEASURED, for `compare` and `export`
(pario.runs reads every kind through these, so neither names a kind):

* `describing(record)`: the kind whose description below a record
  follows: the kind itself (a suite's records: their study's).
* `identity(plan, record)`: the parameters that make a record's point the
  point it is, to match it with the same point of another run: the plan
  point's `params()` (the same for a measured run and its prediction)
  less `not_identity` (its title, trial round, figure number...).
  `point_note(plan)`: a few words the point's row adds (a grouping that
  could not act); default none.
* `measure_keys`, `compared`: the record parameters naming what a record
  measured within its point (bonnie's `measure`, perf's `op`), formatted
  by `params`; and {quantity key: name} of the quantities compared, in
  order ("" when the measure names it already: a rate).
  `measures(record)` -> [Measure] builds on them; override
  `measure_name(record)` for a better name, or `measures` for a kind
  whose records differ in unit (probe's components).

A point (what `plan` returns) offers the runner:
  `label()`, `ranks`, `test_id`, `engine_args(directory, json_path,
  earlier)`, `takes_name()` (whether the engine creates files named by
  `--name`), `remember(result, earlier)` (what later points need from this
  one, kept in the dict `earlier`), `summary(result)` (the progress line),
  `columns()` (the store's point columns: title, layout, files, api,
  block_bytes, size_bytes, group_size) and `params()` (a JSON-able dict
  of what the point is, kept with it).  Optionally `subdirs()`: names of
  directories under --dir the point's engine writes in (a striped test's
  targets), which the runner creates if missing and removes if it made
  them (pario.rundirs); and `space_needs(directory)`: [(directory, bytes)]
  the point's engine writes, which the runner holds against each file
  system's free space before anything runs (pario.space).
"""

import argparse
import importlib
import re
import shlex
from dataclasses import dataclass, field

from ..errors import NoRunnablePoint, UsageError
from ..units import format_size

_MODULES = ("io", "bt", "probe",   # one line per kind: the module in this package
            "bonnie",
            "perf",
            "laplace",
            "flashio",
            "beff",
            "btio",
            "suite")
DEFAULT_KIND = "io"       # a preset without `kind` (the CFS-style studies)


@dataclass(frozen=True)
class Option:
    """A `pario run` option a kind takes: argparse's flags and keywords."""
    flags: tuple
    kwargs: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def dest(self):
        return self.kwargs.get("dest") or self.flags[0].lstrip("-").replace("-", "_")

    def add_to(self, parser):
        parser.add_argument(*self.flags, default=None, **self.kwargs)


@dataclass(frozen=True)
class Measure:
    """One thing a record measured: its name in a row ("block write",
    "write+sync", "T_T"), the quantity key in `record.values`, the
    Quantity (unit, which way is better, format) and every trial."""
    name: str
    key: str
    quantity: object
    values: tuple


@dataclass(frozen=True)
class SizeSetting:
    """What sets how much a point of a kind writes: the option its engine
    command takes (`engine`), the key of an experiment's [[test]] that
    gives it (`key`, docs/presets.md), and the option of `pario run` that
    sets it for every test (`option`), where the kind has one.  A fix pario
    names for a point that does not fit (or is too short to time) must be
    one the user can apply through the command they ran: never the
    engine's own option, which `pario run` does not pass through."""
    engine: str
    key: str
    option: str = ""

    def fix(self, running, verb="lower"):
        """'lower --size' when `running` (the kind of the experiment the
        user ran) takes the option, else the experiment's key."""
        if self.option and any(self.option in o.flags for o in running.options):
            return f"{verb} {self.option}"
        return f"{verb} {self.key} in the [[test]] of an experiment file of your own (docs/presets.md)"

    def in_users_terms(self, error, running):
        """The engine's line for a point with its option replaced by what
        the user can set: its fix at the end ('or lower --grid', 'give a
        smaller --size') and the value it names ('--size 128.0 MiB does
        not fit')."""
        engine = re.escape(self.engine)
        error = re.sub(rf"(?:(?<=: )give a smaller|(?<= or )lower) {engine}$",
                       lambda m: ("free space there or " if m.group(0).startswith("give") else "")
                       + self.fix(running), error)
        return re.sub(rf"^{engine} (\S+ \S+) does not fit", rf"{self.key} \1 does not fit", error)


def plan_points(experiment, options):
    """(points, skipped) of an experiment (presets.Experiment) by its
    kind's plan.  A bad value the experiment's file holds, which the plan
    names by its key (io.setting: 'quick.ranks 2,2 repeats 2'), is told
    with the file first, as every other check of the file is."""
    try:
        return kind_of(experiment.data).plan(experiment.data, options)
    except NoRunnablePoint:
        raise
    except UsageError as exc:
        if re.match(r"(sweep|quick)\.\w+ |test \S+'s ", str(exc)):
            raise UsageError(f"{experiment.origin}: {exc}") from None
        raise


def in_users_terms(error, running, point):
    """An engine's line for a point of the `running` kind's plan, naming
    what the user sets instead of the engine's option (SizeSetting)."""
    setting = running.point_kind(point).size_setting
    return setting.in_users_terms(error, running) if setting else error


def space_fix(running, point, directory):
    """How the user makes room for a point of the `running` kind's plan:
    free space, or lower what sets its size (SizeSetting)."""
    setting = running.point_kind(point).size_setting
    return f"free space on {directory}" + (f" or {setting.fix(running)}" if setting else "")


class Kind:
    name = ""
    # What sets how much a point writes (SizeSetting), for the fixes pario
    # names; None: nothing the user sets.
    size_setting = None
    description = ""
    # `pario COMMAND ...` as a shortcut for `pario run PRESET ...` (a kind
    # whose preset carries the command's name, e.g. `pario probe`).
    command = ""
    # Results whose `predicted_peak` other runs on the same host and file
    # system draw as their ideal curve (pario.explain).
    predicts_peak = False
    options = ()
    sweep_keys = {}
    test_keys = {}
    required_sweep = ()
    required_test = ()
    params = {}
    quantities = {}
    # What a record or its plan carries besides `params`: facts of where it
    # ran (the file system in memory) and a plan's own settings (a test's
    # backend options).  `pario export` gives every one a column in every
    # run of the kind, so a run whose points all failed exports the same
    # columns as one whose points all ran (pario.runs.export_columns).
    facts = ()
    # Plan parameters that do not make a point what it is: its title, how
    # many trials and which round, its phases (each is measured apart),
    # the report's figure number.
    not_identity = ("title", "iterations", "phases", "trial", "figure")
    measure_keys = ()
    compared = {"rate": ""}

    def describing(self, record):
        return self

    def point_kind(self, point):
        """The kind that planned a point of this kind's plan: itself (a
        suite's points: their study's)."""
        return self

    def identity(self, plan, record):
        mine = {k: v for k, v in plan.items() if k not in self.not_identity}
        if not mine:   # a point stored before plans were kept: its record's parameters
            mine = {k: v for k, v in record.params.items() if k not in self.not_identity}
        return {**mine, "test": record.params.get("test", plan.get("test", "")),
                "ranks": record.params.get("ranks", plan.get("ranks"))}

    def point_note(self, plan):
        return ""

    def measure_name(self, record):
        parts = []
        for k in self.measure_keys:
            v = record.params.get(k)
            if v not in (None, ""):
                parts.append(self.params[k].fmt(v) if k in self.params else str(v))
        return " ".join(parts)

    def measures(self, record):
        base = self.measure_name(record)
        out = []
        for key, name in self.compared.items():
            vals = tuple(v for v in record.values.get(key) or () if v is not None)
            if vals:
                out.append(Measure(" ".join(x for x in (base, name) if x), key, self.quantities[key], vals))
        return out

    def check(self, preset, path):
        """Checks beyond key types; raise schema.PresetError."""

    def describe(self, preset):
        return []

    def plan(self, preset, options):
        raise NotImplementedError

    def plan_notes(self, preset, points, options):
        return []

    def unused_options(self, preset, options):
        """{flag: why} of the generic `pario run` options given (--ranks,
        --tests...) that this plan would ignore: each is refused by name
        (refuse_unused_options) rather than accepted without effect."""
        return {}

    def records(self, point, result):
        return []

    def planned_params(self, plan):
        """A plan's parameters under the names and values its records
        would carry: how `pario export` fills a failed point's row, which
        has no result to read them from.  As planned, unless the kind's
        records read a parameter otherwise."""
        return plan

    def finish(self, records):
        return records

    def timed_seconds(self, record, result):
        """The times of the separately timed phases behind a record's rate
        (what the diagnosis's short-phase rule weighs): its own "seconds",
        unless a kind's rate sums several phases (FLASH-IO's three files)."""
        return list(record.values.get("seconds") or [])

    def figures(self, preset, records, options):
        return []

    def absent(self, preset, options):
        """{parameter: {value: why}}: values an experiment's figures select
        that this plan gives no point, and why (figures.why_left_out)."""
        return {}

    def heading_note(self, records):
        """What the measured values of these records mean, for the heading
        of a figure drawn from them (fsync, the page cache, O_DIRECT): ""
        when the kind has nothing to say.  Every figure of a run gets it,
        the kind's own and the experiment's [[figure]]s alike, so that no
        heading claims what did not run (pario.runner)."""
        return ""

    def tables(self, preset, records, options):
        return []

    def notes(self, preset, records, options):
        return []


_KINDS = None


def kinds():
    """{name: Kind} for every registered kind, in registry order."""
    global _KINDS
    if _KINDS is None:
        _KINDS = {}
        for mod in _MODULES:
            kind = importlib.import_module(f"{__name__}.{mod}").KIND
            _KINDS[kind.name] = kind
    return _KINDS


def kind_named(name):
    try:
        return kinds()[name]
    except KeyError:
        raise UsageError(f"kind '{name}' is unknown: use one of {', '.join(kinds())}") from None


def kind_of(preset):
    """A preset's kind; presets without `kind` are access-pattern (io) studies."""
    return kind_named(preset.get("kind", DEFAULT_KIND))


def add_kind_options(parser, listed=None):
    """Every kind's options, each flag once, for `pario run`.  With
    `listed(option)`, those it says no to are parsed but left out of
    --help: giving one gets the command's own one-line refusal by name,
    not argparse's "unrecognized arguments"."""
    seen = {}
    for kind in kinds().values():
        for opt in kind.options:
            if opt.flags[0] in seen:
                continue
            seen[opt.flags[0]] = opt
            if listed is None or listed(opt):
                opt.add_to(parser)
            else:
                parser.add_argument(*opt.flags, default=None, **{**opt.kwargs, "help": argparse.SUPPRESS})


def refuse_foreign_options(kind, options, experiment):
    """An option given that the preset's kind does not take: one line
    naming the kinds that take it."""
    mine = {o.dest for o in kind.options}
    for other in kinds().values():
        for opt in other.options:
            if opt.dest in mine or options.get(opt.dest) is None:   # None: not given
                continue
            takers = [k.name for k in kinds().values() if any(o.dest == opt.dest for o in k.options)]
            raise UsageError(f"{opt.flags[0]} does not apply to {experiment} (a study of kind "
                             f"{kind.name}): it is for kind {' and '.join(takers)}; drop it or "
                             f"run a preset of that kind (see 'pario presets')")


def refuse_unused_options(kind, preset, options):
    """The first option a plan would ignore (Kind.unused_options): one
    line naming it, why, and the fix."""
    for flag, why in kind.unused_options(preset, options).items():
        raise UsageError(f"{flag} does not apply: {why}: drop {flag}")


# The options of `pario run` itself that shape what a run measured (the MPI
# library and how its ranks started among them; every kind's own options do
# too); --timeout, --out and --db do not, and `pario list` leaves them out.
RUN_SHAPING = {"quick": "--quick", "ranks": "--ranks", "tests": "--tests", "mpi": "--mpi",
               "launcher": "--launcher", "launcher_template": "--launcher-template"}
RUN_DEFAULTS = {"mpi": "auto"}  # --mpi's default: the library the launcher found


def options_text(options):
    """The options a stored run was given that shape what it measured, as
    typed ('--quick --tests bonnie --ranks 1,2'): what tells apart two runs
    of one preset in `pario list`."""
    flags = dict(RUN_SHAPING)
    negatable = set()
    for kind in kinds().values():
        for opt in kind.options:
            flags.setdefault(opt.dest, opt.flags[0])
            action = opt.kwargs.get("action")
            if isinstance(action, type) and issubclass(action, argparse.BooleanOptionalAction):  # io's OneWay too
                negatable.add(opt.dest)
    out = []
    for dest, flag in flags.items():
        v = options.get(dest)
        if RUN_DEFAULTS.get(dest, object()) == v:  # as good as not given
            continue
        if v is False and dest in negatable:
            out.append(f"--no-{flag[2:]}")
        elif v is True:
            out.append(flag)
        elif isinstance(v, list) and v:
            out.append(f"{flag} {','.join(map(str, v))}")
        elif v not in (None, False, "", []):
            out.append(f"{flag} {shlex.quote(str(v))}")  # a template's spaces, as it was typed
    return " ".join(out)


# io's reason for a point whose ranks' shares are smaller than a block
SHARE_TOO_SMALL = "block is larger than a rank's share"


# A plan's skipped points listed one by one up to this many; more are told
# once per reason (72 lines of one reason hid a refusal under them)
SKIPS_LISTED = 6


def _skipped_lines(skipped):
    """The skipping lines: each point, or, for many, one line per reason
    with how many points it takes and one of them (a plan that runs listed
    160 lines of one reason before its first point)."""
    if len(skipped) <= SKIPS_LISTED:
        return [f"skipping {p.label()}: {why}" for p, why in skipped]
    by_why = {}
    for p, why in skipped:
        by_why.setdefault(why, []).append(p)
    return [f"skipping {len(ps)} point{'s' if len(ps) > 1 else ''} ({ps[0].label()}"
            f"{' ...' if len(ps) > 1 else ''}): {why}" for why, ps in by_why.items()]


def skip_lines(skipped, points, options):
    """What a plan leaves out, for `pario run` and `pario model` alike: one
    line per skipped point (per reason where there are many), then a
    warning for each --ranks or --blocks value the user asked for that has
    no point left at all (a figure's column gone missing is easy to
    overlook among the skipping lines)."""
    lines = _skipped_lines(skipped)
    for flag, attr, shown in (("ranks", "ranks", str), ("blocks", "block", format_size)):
        if not options.get(flag):
            continue  # the preset's own values: nothing the user asked for
        kept = {getattr(p, attr, None) for p in points}
        lost = {}
        for p, why in skipped:
            value = getattr(p, attr, None)
            if value is not None and value not in kept:
                lost.setdefault(value, []).append(why)
        for value, whys in lost.items():
            why = "; ".join(dict.fromkeys(whys))
            fix = "see the skipping lines above"
            if flag == "ranks" and whys == [SHARE_TOO_SMALL] * len(whys):
                block = max(p.block for p, _ in skipped if p.ranks == value)
                fix = (f"--size {format_size(value * block)} or more gives each of {value} ranks a "
                       f"{format_size(block)} block, or give smaller --blocks")
            lines.append(f"warning: --{flag} asked for {shown(value)} but none of its points can run "
                         f"({why}): {fix}")
    return lines


def csv_list(text):
    """'a,b' -> ['a', 'b']; an empty list or entry is refused, never read
    as "all" (`--tests ''`, `--ranks ,`)."""
    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise argparse.ArgumentTypeError(f"'{text}' names nothing: give a comma-separated list, "
                                         "or leave the option out for the preset's own")
    if not all(items):
        raise argparse.ArgumentTypeError(f"'{text}' has an empty entry: remove the extra comma")
    try:
        refuse_repeats(items, f"'{text}'")
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return items


def refuse_repeats(values, shown, names=None):
    """A list that names one value twice would run every point of it twice
    (and merge them into one cell): refuse it, naming the value.  `names`
    are what the user typed for each value (4k and 4096 are one size)."""
    names = list(names if names is not None else values)
    seen = {}
    for value, name in zip(values, names):
        if value in seen:
            same = name if name == seen[value] else f"{seen[value]} (as {name})"
            raise UsageError(f"{shown} repeats {same}: give each value once")
        seen[value] = name
    return values


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be more than 0")
    return v
