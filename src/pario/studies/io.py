"""Kind `io`: access-pattern studies (the CFS report's broadcast,
partitioned and interleaved tests, and their descendants).

A point is one test (layout, phases, grouping) at one rank count and one
block size: one `pario-engine io` run of several trials.  Points the
layout cannot do (a block larger than a rank's share, a size that does not
divide) are left out of the plan with the reason, rather than sent to fail
in the engine.  Each point's phases become records (rate, time and page
cache residency of every trial); the default figures are the report's:
rate against ranks, one line per block size, one figure per test and
phase, numbered as the report numbers them when the preset says so."""

import argparse
import re
from dataclasses import dataclass, field

from .. import schema
from ..errors import NoRunnablePoint, UsageError
from ..figures import Figure, Param, Quantity, Record, size_param
from ..units import engine_size, format_size, parse_size
from . import SHARE_TOO_SMALL, Kind, Option, SizeSetting, csv_list, positive_int, refuse_repeats

# The engine's layout table (engine/src/io/layout.c): names a preset may use.
LAYOUTS = ("broadcast", "partitioned", "interleaved", "random")
# The engine's backend table (engine/src/io/backend_registry.c).
APIS = ("posix", "stdio", "mmap", "uring", "mpiio", "hdf5")
PHASES = ("write", "read")
# Backends the engine can stripe over targets: per-call ones, each rank
# opening its parts alone (engine/src/io/io_options.c, check_striping).
STRIPE_APIS = ("posix", "stdio", "mmap")
STRIPE_MAX_TARGETS = 64      # the engine's STRIPE_MAX_TARGETS
DEFAULT_STRIPE_UNIT = "1m"   # the ASCI Red PFS default stripe size (section 2.4)
BACKGROUND_KINDS = ("write", "cpu")
BACKGROUND_MAX = 64          # the engine's BACKGROUND_MAX loaders per node
BACKGROUND_FILE_BYTES = 64 << 20  # each write loader's file (the engine's BACKGROUND_FILE_BYTES)
# The sweep-wide phase choices a test may set for itself (the ASCI Red
# 16 MiB cached file beside a large evicted one): key -> sweep default.
PHASE_CHOICES = {"prealloc": False, "evict": True, "fsync": True}


class OneWay(argparse.BooleanOptionalAction):
    """--flag / --no-flag, refusing both on one line (never "the last one
    wins", as the engine refuses --fsync --no-fsync)."""

    def __call__(self, parser, namespace, values, option_string=None):
        want = not option_string.startswith("--no-")
        if getattr(namespace, self.dest, None) not in (None, want):
            flag = self.option_strings[0]
            parser.error(f"{flag} and --no-{flag[2:]} exclude each other: give one")
        setattr(namespace, self.dest, want)


@dataclass
class IoPoint:
    test_id: str
    title: str
    layout: str
    phases: list
    ranks: int
    block: int
    size: int
    group: int = 0
    files: str = "shared"
    api: str = "posix"
    iterations: int = 3
    extra: list = field(default_factory=list)
    options: list = field(default_factory=list)  # the backend's own flags, from the test
    aggregators: int = 0
    stripe_targets: int = 0      # >0: the file spread over <dir>/stripe-0..N-1
    stripe_unit: int = 0
    background: int = 0          # loader processes per node during each phase
    background_kind: str = ""
    # Engine warnings about a choice the preset's test made on purpose
    # (the runner leaves them out): e.g. a cached test's fsync = false.
    expected_warnings: tuple = ()

    def subdirs(self):
        """Directories under --dir this point needs, which the runner
        creates (and removes again if it created them)."""
        return [f"stripe-{t}" for t in range(self.stripe_targets)]

    def engine_args(self, directory, json_path, earlier=None):
        where = (["--stripe-dirs", ",".join(str(directory / d) for d in self.subdirs()),
                  "--stripe-unit", engine_size(self.stripe_unit)] if self.stripe_targets
                 else ["--dir", str(directory)])
        args = ["io", *where, "--layout", self.layout, "--files", self.files,
                "--api", self.api, "--block", engine_size(self.block),
                "--size", engine_size(self.size), "--phases", ",".join(self.phases),
                "--iterations", str(self.iterations), "--json", str(json_path)]
        if self.group:
            args += ["--group", str(self.group)]
        if self.aggregators:
            args += ["--aggregators", str(self.aggregators)]
        if self.background:
            args += ["--background", str(self.background), "--background-kind", self.background_kind]
        return args + list(self.options) + list(self.extra)

    def loader_bytes(self):
        """Bytes the point's write loaders' files take (none for other loads)."""
        return self.background * BACKGROUND_FILE_BYTES if self.background_kind == "write" else 0

    def space_needs(self, directory):
        """(directory, bytes) the engine writes there: the engine's own
        rule (io_options.c, check_space): the file, or one per rank of a
        broadcast's per-rank files; the loaders' files; a striped file's
        part on each target (round-robin in stripe units)."""
        need = self.size * self.ranks if self.layout == "broadcast" and self.files == "per-rank" else self.size
        loaders = self.loader_bytes()
        if not self.stripe_targets:
            return [(directory, need + loaders)]
        n, unit = self.stripe_targets, self.stripe_unit
        full, tail = divmod(need, unit)
        parts = [(full // n + (1 if t < full % n else 0)) * unit + (tail if tail and full % n == t else 0)
                 for t in range(n)]
        parts[0] += loaders  # the engine's loaders write into its first directory
        return [(directory / d, b) for d, b in zip(self.subdirs(), parts)]

    def file_bytes(self):
        """Bytes in one file, as the engine splits --size (io_options.c): a
        rank's share of per-rank files, except a broadcast's, whose every
        file is the whole --size."""
        split = self.files == "per-rank" and self.layout != "broadcast"
        return self.size // self.ranks if split else self.size

    def stripe_reach(self):
        """(targets one file's stripe units reach, the --size that reaches
        every target): the engine's rule (stripe.c, stripe_targets_reached)
        on one file."""
        units = -(-self.file_bytes() // self.stripe_unit)
        files_in_size = self.size // self.file_bytes()
        return min(units, self.stripe_targets), self.stripe_targets * self.stripe_unit * files_in_size

    def warning_in_users_terms(self, text):
        """An engine warning with its fix in the terms of the command the
        user ran: `pario run` takes no --stripe-unit, nor a backend's own
        options (--mpiio-impl), which a test's `options` key sets."""
        own = sorted({f for f in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text)
                      if f in self.options}) if self.options else []
        if own:
            text += (f" ({', '.join(own)}: the test's options key, in an experiment file of your own, "
                     "docs/presets.md)")
        if not self.stripe_targets:
            return text
        _, size = self.stripe_reach()
        text = re.sub(r"^--stripe-unit (\S+ \S+) puts", r"a stripe unit of \1 puts", text)
        return re.sub(r"a --stripe-unit of at most (\S+ \S+) reaches every target$",
                      lambda m: f"a --size of at least {format_size(size)} (or a stripe_unit of at most "
                                f"{m.group(1)} in an experiment file of your own) reaches every target", text)

    def takes_name(self):
        return True

    def remember(self, result, earlier):
        """Nothing here feeds later points."""

    def summary(self, result):
        return ", ".join(f"{ph['name']} {ph['summary']['best_mib_per_s']:.0f} MiB/s"
                         for ph in result["phases"])

    def label(self):
        loaders = f" loaders={self.background}" if self.background_kind else ""
        return f"{self.test_id} ranks={self.ranks} block={format_size(self.block)}{loaders}"

    def columns(self):
        return {"title": self.title, "layout": self.layout, "files": self.files, "api": self.api,
                "block_bytes": self.block, "size_bytes": self.size, "group_size": self.group}

    def params(self):
        return {"test": self.test_id, "title": self.title, "layout": self.layout,
                "phases": list(self.phases), "ranks": self.ranks, "block": self.block,
                "size": self.size, "group": self.group, "files": self.files, "api": self.api,
                "iterations": self.iterations, "extra": list(self.extra),
                "options": list(self.options), "aggregators": self.aggregators,
                "stripe_targets": self.stripe_targets, "stripe_unit": self.stripe_unit,
                "background": self.background, "background_kind": self.background_kind}


def why_impossible(layout, size, block, ranks, files, aggregators=0):
    if aggregators > ranks:
        return "more aggregators than ranks"
    if block % 8:
        return "block is not a multiple of 8 bytes"
    if layout == "broadcast":
        return None if size % block == 0 and block <= size else "size is not a whole number of blocks"
    per_file = size // ranks if files == "per-rank" else size
    sharers = 1 if files == "per-rank" else ranks
    if size % ranks and files == "per-rank":
        return "size does not split into per-rank files"
    if block > per_file // sharers:
        return SHARE_TOO_SMALL
    if per_file % (block * sharers):
        return "size is not a whole number of ranks x blocks"
    return None


MAX_RANKS = 1 << 20  # beyond any machine pario can launch on


def int_list(values, what):
    try:
        out = [int(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{what} must be whole numbers, e.g. 1,2,4,8") from exc
    if not out or any(v <= 0 for v in out):
        raise UsageError(f"{what} must be whole numbers of at least 1, e.g. 1,2,4,8")
    if any(v > MAX_RANKS for v in out):
        raise UsageError(f"{what} must be at most {MAX_RANKS} ranks")
    return refuse_repeats(out, f"{what} {','.join(map(str, values))}", [str(v) for v in values])


def select_tests(preset, tests):
    """The preset's tests, or those named by --tests (each must exist)."""
    chosen = preset["test"]
    if not tests:
        return chosen
    known = {t["id"] for t in chosen}
    unknown = [t for t in tests if t not in known]
    if unknown:
        raise UsageError(f"--tests {','.join(unknown)} unknown in preset {preset['name']}: "
                         f"use some of {', '.join(sorted(known))}")
    return [t for t in chosen if t["id"] in tests]


def sweep_of(preset, quick):
    sweep = dict(preset["sweep"])
    if quick and "quick" in preset:
        sweep.update(preset["quick"])
    return sweep


def setting(options, preset, key, flag):
    """(value, name) of a plan's setting: the command line's option, named
    by its flag (--ranks), else the experiment's [quick] or [sweep] value,
    named by its key (quick.ranks), so a bad value is told where the user
    wrote it (plan_points adds the file's name)."""
    given = options.get(key)
    if given is not None:
        return given, flag
    section = "quick" if options.get("quick") and key in preset.get("quick", {}) else "sweep"
    return preset[section].get(key), f"{section}.{key}"


# A kernel's trials are rounds: each runs every point of the plan again,
# so the plan holds rounds x points (1e8 of them took 24 GB, tester 15).
MAX_ROUNDS = 1000


def rounds_of(options, preset, default):
    """The rounds of a plan whose trials are rounds of points (BT, the
    SGI 750 kernels): --iterations or the experiment's, at most MAX_ROUNDS."""
    value, name = setting(options, preset, "iterations", "--iterations")
    rounds = int(value or default)
    if rounds > MAX_ROUNDS:
        raise UsageError(f"{name} {rounds} is more than {MAX_ROUNDS} rounds (each runs every point of the "
                         "plan again): use fewer")
    return rounds


def powers_of_two(limit):
    out, r = [], 1
    while r <= limit:
        out.append(r)
        r *= 2
    return out


# The engine's warning for --no-fsync, which tells the user to drop it:
# right when they passed --no-fsync, noise when the test chose fsync = false.
NO_FSYNC_WARNING = "write phases without fsync"


def _phase_choices(test, sweep, options):
    """(prealloc, evict, fsync) of one test: its own key, else the sweep's,
    else the default; the command line's --prealloc/--no-prealloc,
    --evict, --cached and --no-fsync override every test."""
    got = {k: test.get(k, sweep.get(k, default)) for k, default in PHASE_CHOICES.items()}
    if options.get("prealloc") is not None:
        got["prealloc"] = options["prealloc"]
    if options.get("evict"):
        got["evict"] = True
    if options.get("cached"):
        got["evict"] = False
    if options.get("no_fsync"):
        got["fsync"] = False
    return got["prealloc"], got["evict"], got["fsync"]


def _phase_flags(phases, prealloc, evict, fsync):
    """Engine flags for the preset's (or the user's) choices, where the
    phases let them act: the engine refuses --evict without a read."""
    flags = []
    if "write" in phases:
        if prealloc:
            flags.append("--prealloc")
        if not fsync:
            flags.append("--no-fsync")
    if "read" in phases and evict:
        flags.append("--evict")
    return flags


def _heading_note(records, phase):
    """What a figure's rates mean, for its heading: O_DIRECT, fsync on
    writes, the page cache on reads, or a file in memory."""
    note = _cache_note(records, phase)
    directs = {bool(r.params.get("direct")) for r in records}
    if directs == {True}:
        return f"O_DIRECT; {note}"
    return note if directs == {False} else f"O_DIRECT on some points only; {note}"


# A modelled machine without a host page cache (model/machine.py caches_of):
# where its unsynced writes stop, and what its reads may find, whatever
# --evict asked of the clients.
_MODEL_CACHES = {
    "io_node": ("no fsync: rates into the I/O nodes' caches",
                "no client cache; the I/O nodes' caches are not emptied before a read"),
    "none": ("no fsync, but the modelled machine has no cache: rates to storage",
             "no cache: reads from the disks"),
}


def _cache_note(records, phase):
    if {r.params.get("memory_backed") for r in records} == {True}:
        return f"the file lives in memory: {phase} rates are memory rates"
    kinds = {r.params.get("caches") for r in records}
    model = _MODEL_CACHES.get(kinds.pop()) if len(kinds) == 1 else None
    if phase == "read" and model:
        return model[1]
    if phase == "write":
        syncs = {r.params.get("fsync") for r in records}
        unsynced = model[0] if model else "no fsync: rates into the page cache"
        note = ("fsync before close: rates to storage" if syncs == {True} else
                unsynced if syncs == {False} else "fsync on some points only")
        if {r.params.get("prealloc") for r in records} == {True}:
            note = "preallocated, " + note
        return note
    evicts = {bool(r.params.get("evict")) for r in records}
    if evicts == {True}:
        return "page cache evicted before each read"
    if evicts == {False}:
        return "not evicted (--cached, or the test's own choice): reads may come from the page cache"
    return "page cache evicted before some reads only"


def _test_grid(test, values, key):
    """A test's own `ranks` or `blocks` choose among the sweep's (so --quick
    shrinks them too); without them the test takes the whole sweep."""
    mine = test.get(key)
    if mine is None:
        return values
    want = {parse_size(v) for v in mine} if key == "blocks" else set(mine)
    return [v for v in values if v in want]


def _stripe_facts(result):
    stripe = result["params"].get("stripe") or {}
    return {"stripe_targets": stripe.get("targets", 0), "stripe_unit": stripe.get("unit_bytes")}


# Atomic mode asked for where the MPI library took no byte-range lock: the
# run measured relaxed I/O (the engine's warning says so), and its label and
# export column say what ran, not what was asked.
NOT_HONOURED = "not honoured"


def _atomic_ran(api_options):
    """True (atomic), False (relaxed), NOT_HONOURED, or None (no such mode)."""
    atomic = api_options.get("atomic")
    if atomic and (api_options.get("atomic_mode") or {}).get("honoured") is False:
        return NOT_HONOURED
    return atomic


def _api_facts(api_options):
    """Record parameters from what the backend says it ran (mpiio, hdf5):
    collective or not, atomic or relaxed, aggregators asked for."""
    calls = api_options.get("calls") or api_options.get("transfer")
    return {"collective": None if calls is None else calls != "independent",
            "atomic": _atomic_ran(api_options),
            "aggregators": api_options.get("aggregators_asked") or 0,
            "mpiio_impl": api_options.get("implementation"),
            "stdio_buffer": api_options.get("buffer_bytes")}


def _given_list(values):
    return ",".join(map(str, values)) if isinstance(values, (list, tuple)) else str(values)


def _phase_title(title, phase):
    return title if title.lower().endswith(phase) else f"{title} {phase.capitalize()}"


def _idle_group(plan):
    """The group size of a plan point where it cannot act (G >= ranks), else 0."""
    g, ranks = plan.get("group") or 0, plan.get("ranks") or 0
    return g if g and g >= ranks else 0


class IoKind(Kind):
    name = "io"
    size_setting = SizeSetting("--size", "size", "--size")
    description = "access patterns: rate against ranks and block size, per layout and grouping"
    options = (
        Option(("--blocks",), dict(type=csv_list, help="block sizes, e.g. 4k,64k,1m")),
        Option(("--size",), dict(help="file size for every test (default: the preset's)")),
        Option(("--iterations",), dict(type=positive_int, help="trials per point (best is reported)")),
        Option(("--files",), dict(choices=["shared", "per-rank"], help="one shared file or one per rank")),
        Option(("--evict",), dict(action="store_true",
                                  help="evict the file from the page cache before reads (the default)")),
        Option(("--cached",), dict(action="store_true",
                                   help="do not evict the file from the page cache before reads "
                                        "(default: evict, so reads come from storage)")),
        Option(("--prealloc",), dict(action=OneWay,
                                     help="reserve each file's space before write phases "
                                          "(default: the preset's; cfs preallocates, as the report)")),
        Option(("--no-fsync",), dict(action="store_true", dest="no_fsync",
                                     help="no fsync before close in write phases (default: fsync, "
                                          "so writes are timed to storage)")),
        Option(("--direct",), dict(action="store_true", help="O_DIRECT I/O")),
        Option(("--verify",), dict(action="store_true", help="check every byte after each phase (untimed)")),
        Option(("--group-unit",), dict(choices=["call", "rank"],
                                       help="grouped tests: one call (default, as the CFS report) or a "
                                            "rank's whole share per token")),
    )
    sweep_keys = {"ranks": schema.Type("list of whole numbers or \"slots\"", lambda v: None if v == "slots"
                                       else schema.POSITIVES.check(v)),
                  "max_ranks": schema.POSITIVE, "blocks": schema.SIZES, "size": schema.SIZE,
                  "iterations": schema.POSITIVE, "prealloc": schema.BOOL, "evict": schema.BOOL,
                  "fsync": schema.BOOL, "kind_figures": schema.BOOL, "background": schema.COUNTS}
    required_sweep = ("ranks", "blocks", "size")
    test_keys = {
        "id": schema.ID, "title": schema.STRING, "layout": schema.one_of(*LAYOUTS),
        "phases": schema.Type("list of write/read", lambda v: schema.STRINGS.check(v) or next(
            (f"'{p}' is not a phase: use write and/or read" for p in v if p not in PHASES), None)),
        "size": schema.SIZE, "group": schema.POSITIVE, "files": schema.one_of("shared", "per-rank"),
        "api": schema.one_of(*APIS), "quick": schema.BOOL,
        "options": schema.STRINGS, "aggregators": schema.POSITIVE,
        "ranks": schema.POSITIVES, "blocks": schema.SIZES,
        **{k: schema.BOOL for k in PHASE_CHOICES},
        "stripe_targets": schema.POSITIVE, "stripe_unit": schema.SIZE,
        "background": schema.COUNTS, "background_kind": schema.one_of(*BACKGROUND_KINDS),
        "figures": schema.Type("table of phase = \"Figure N\"", lambda v: None if isinstance(v, dict) and all(
            k in PHASES and isinstance(x, str) for k, x in v.items())
            else "is not a table like { write = \"Figure 6\", read = \"Figure 7\" }"),
    }
    required_test = ("id", "layout", "phases")
    params = {
        "test": Param("test"), "title": Param("test"), "layout": Param("layout"),
        "phase": Param("phase"), "ranks": Param("ranks", str, "log2"), "block": size_param("block"),
        "size": size_param("file size"), "files": Param("files"), "api": Param("api"),
        "group": Param("group", lambda g: f"G={g}" if g else "ungrouped", named=False),
        "group_unit": Param("group unit"), "prealloc": Param("preallocated"),
        "fsync": Param("fsync"), "evict": Param("evicted"), "direct": Param("O_DIRECT"),
        "fs_type": Param("file system"),
        "aggregators": Param("aggregators", str, "log2"),
        "collective": Param("calls", lambda c: "-" if c is None else "collective" if c else "independent",
                            named=False),
        "atomic": Param("mode", lambda a: "-" if a is None else
                        "atomic not honoured (relaxed)" if a == NOT_HONOURED else
                        "atomic (MUNIX)" if a else "relaxed (MASYNC)", named=False),
        "mpiio_impl": Param("MPI-IO"),
        "stdio_buffer": Param("stdio buffer", lambda b: f"{format_size(b)} buffer", named=False, unit="bytes"),
        "stripe_targets": Param("stripe targets", str, "log2"),
        "stripe_unit": size_param("stripe unit"),
        "background": Param("loaders per node", str, "linear"),
        "background_kind": Param("load"),
    }
    quantities = {
        "rate": Quantity("", "MiB/s", "max"),
        # the engine's per-target rate: aggregate / targets (the report's
        # "scaled", per-RAID rate of a striped file)
        "per_target_rate": Quantity("per-target (scaled)", "MiB/s", "max"),
        # the report's load: a known task's time under load / alone
        "load": Quantity("load", "", "max", ".2f"),
        "seconds": Quantity("time", "s", "min", ".4f"),
        "cache": Quantity("page cache residency", "fraction", "min", ".2f"),
    }

    measure_keys = ("phase",)
    facts = ("memory_backed", "caches", "extra", "options")

    def identity(self, plan, record):
        """A group at or above the rank count cannot act (plan_notes says
        so before the run): the point ran ungrouped, and is that point."""
        mine = super().identity(plan, record)
        if _idle_group(plan):
            mine["group"] = 0
        return mine

    def point_note(self, plan):
        g, ranks = _idle_group(plan), plan.get("ranks")
        return f"G={g} cannot act at {ranks} rank{'s' if ranks != 1 else ''}" if g else ""

    def check(self, preset, path):
        loaders = set(preset["sweep"].get("background", [])) | set(preset.get("quick", {}).get("background", []))
        for where, table in (("sweep", preset["sweep"]), ("quick", preset.get("quick", {}))):
            if any(n > BACKGROUND_MAX for n in table.get("background", [])):
                raise schema.PresetError(path, f"{where}.background",
                                         f"at most {BACKGROUND_MAX} loaders per node (the engine's limit)")
        sweep = preset["sweep"]
        sweep_ranks = None if sweep.get("ranks") == "slots" else sweep.get("ranks")
        sweep_blocks = sweep.get("blocks")
        loaders_swept = sweep.get("background", [0])
        for i, t in enumerate(preset["test"], 1):
            if t["layout"] == "broadcast" and "write" in t["phases"]:
                raise schema.PresetError(path, f"test[{i}].phases",
                                         "layout broadcast only reads: use phases = [\"read\"]")
            targets = t.get("stripe_targets")
            if targets is None and "stripe_unit" in t:
                raise schema.PresetError(path, f"test[{i}].stripe_unit",
                                         "stripes nothing without stripe_targets: add stripe_targets = 2 "
                                         "or drop it")
            if targets is not None:
                if targets > STRIPE_MAX_TARGETS:
                    raise schema.PresetError(path, f"test[{i}].stripe_targets",
                                             f"{targets} is above the engine's {STRIPE_MAX_TARGETS} targets")
                if t.get("api", "posix") not in STRIPE_APIS:
                    raise schema.PresetError(path, f"test[{i}].stripe_targets",
                                             f"api {t['api']} cannot be striped (the engine splits each call "
                                             f"over the targets): use api {', '.join(STRIPE_APIS)}")
                if parse_size(t.get("stripe_unit", DEFAULT_STRIPE_UNIT)) % 8:
                    raise schema.PresetError(path, f"test[{i}].stripe_unit",
                                             "is not a multiple of 8 bytes: use 4k, 64k, 1m ...")
            for key, listed in (("ranks", sweep_ranks), ("blocks", sweep_blocks), ("background", loaders_swept)):
                mine = t.get(key)
                if mine is None or listed is None:
                    continue
                # a test's own values choose among the sweep's (_test_grid):
                # one the sweep lacks would never run, without a word
                parse = parse_size if key == "blocks" else int
                allowed = {parse(x) for x in listed}
                missing = [v for v in mine if parse(v) not in allowed]
                if missing:
                    whose = (f"sweep.{key} ({', '.join(map(str, listed))})" if key in preset["sweep"]
                             else f"sweep.{key} (0, the default: no loaders)")
                    raise schema.PresetError(path, f"test[{i}].{key}",
                                             f"{', '.join(map(str, missing))} is not among {whose}: a test's "
                                             f"{key} choose among the sweep's; add it to sweep.{key} or "
                                             "drop it from the test")
            if "background_kind" in t and not loaders - {0}:
                raise schema.PresetError(path, f"test[{i}].background_kind",
                                         "no loaders to run: add background = [0, 1, 2] (loaders per "
                                         "node) to [sweep]")

    def describe(self, preset):
        sweep = preset["sweep"]
        ranks = (f"powers of two up to the launcher's slots (at most {sweep.get('max_ranks', 128)})"
                 if sweep["ranks"] == "slots" else ",".join(map(str, sweep["ranks"])))
        lines = [f"ranks {ranks}; blocks {','.join(sweep['blocks'])}; "
                 f"size {sweep['size']}; best of {sweep.get('iterations', 3)}",
                 f"{'preallocated, ' if sweep.get('prealloc') else ''}"
                 f"{'fsync before close' if sweep.get('fsync', True) else 'no fsync'}, "
                 f"{'page cache evicted before reads' if sweep.get('evict', True) else 'reads may be cached'}"]
        if sweep.get("background"):
            lines.append(f"background loaders per node {','.join(map(str, sweep['background']))}")
        for t in preset["test"]:
            group = f", group {t['group']}" if t.get("group") else ""
            api = "" if t.get("api", "posix") == "posix" else f", {t['api']} {' '.join(t.get('options', []))}"
            aggs = f", {t['aggregators']} aggregator(s)" if t.get("aggregators") else ""
            own = "".join(f", {'' if t[k] else 'no '}{k}" for k in PHASE_CHOICES if k in t)
            stripe = (f", striped over {t['stripe_targets']} targets" if t.get("stripe_targets") else "")
            load = f", {t['background_kind']} load" if t.get("background_kind") else ""
            # which --ranks/--blocks keep the test (the rest leave it out)
            only = "".join(f", {what} {','.join(map(str, t[key]))} only"
                           for key, what in (("ranks", "ranks"), ("blocks", "blocks")) if t.get(key))
            lines.append(f"- {t['id']}: {t['layout']} {'/'.join(t['phases'])}{group}{api.rstrip()}{aggs}"
                         f"{own}{stripe}{load}{only}")
        return lines

    def plan(self, preset, options):
        quick = bool(options.get("quick"))
        sweep = sweep_of(preset, quick)
        ranks, ranks_name = setting(options, preset, "ranks", "--ranks")
        if ranks == "slots":
            rank_list = powers_of_two(min(options.get("slots") or 1, int(sweep.get("max_ranks", 128))))
        else:
            rank_list = int_list(ranks, ranks_name)
        blocks, blocks_name = setting(options, preset, "blocks", "--blocks")
        block_list = refuse_repeats([parse_size(b, f"{blocks_name} entry") for b in blocks],
                                    f"{blocks_name} {','.join(blocks)}", blocks)
        iters = options.get("iterations") or int(sweep.get("iterations", 3))
        tests = options.get("tests")
        chosen = select_tests(preset, tests)
        if not tests and quick:
            chosen = [t for t in chosen if t.get("quick", True)]
        extra = [f"--{flag}" for flag in ("direct", "verify") if options.get(flag)]
        if options.get("evict") and options.get("cached"):
            raise UsageError("--evict and --cached contradict each other: give one (eviction is the default)")
        unit = options.get("group_unit")
        if unit and not any(t.get("group") for t in chosen):  # as the engine refuses it without --group
            raise UsageError(f"--group-unit {unit} acts on grouped tests (a test's group = G), and none of "
                             f"{', '.join(t['id'] for t in chosen)} is grouped: drop it, or add a grouped "
                             "test to --tests")
        loaders = [int(n) for n in sweep.get("background", [0])]

        points, skipped, unplanned = [], [], []
        for test in chosen:
            # A preset's per-test size (broadcast's 8 MB file) is kept unless the
            # user sets one size for everything.
            size, size_name = setting(options, preset, "size", "--size")
            if not options.get("size") and "size" in test:
                size, size_name = test["size"], f"test {test['id']}'s size"
            test_size = parse_size(size, size_name)
            grouped = int(test.get("group", 0))
            aggregators = int(test.get("aggregators", 0))
            prealloc, evict, fsync = _phase_choices(test, sweep, options)
            stripes = int(test.get("stripe_targets", 0))
            stripe_unit = parse_size(test.get("stripe_unit", DEFAULT_STRIPE_UNIT)) if stripes else 0
            my_loaders = _test_grid(test, loaders, "background")
            load_kind = test.get("background_kind", "write" if any(my_loaders) else "")
            my_ranks, my_blocks = _test_grid(test, rank_list, "ranks"), _test_grid(test, block_list, "blocks")
            grid = [(r, b, n) for r in my_ranks for b in my_blocks for n in my_loaders]
            # a test whose own values the lists in use leave out (--quick's)
            unplanned += [f"test {test['id']} runs at {key} {','.join(map(str, test[key]))} only, which "
                          f"{name} {','.join(map(str, listed))} leaves out"
                          for key, got, name, listed in (
                              ("ranks", my_ranks, ranks_name, rank_list),
                              ("blocks", my_blocks, blocks_name, blocks),
                              ("background", my_loaders, "sweep.background", loaders)) if not got]
            for r, b, n in grid:
                p = IoPoint(test_id=test["id"], title=test.get("title", test["id"]),
                            layout=test["layout"], phases=list(test["phases"]), ranks=r, block=b,
                            size=test_size, group=grouped,
                            files=options.get("files") or test.get("files", "shared"),
                            api=test.get("api", "posix"), iterations=iters,
                            extra=extra + _phase_flags(test["phases"], prealloc, evict, fsync)
                            + (["--group-unit", unit] if unit and grouped else []),
                            options=list(test.get("options", [])), aggregators=aggregators,
                            stripe_targets=stripes, stripe_unit=stripe_unit, background=n,
                            background_kind=load_kind,
                            expected_warnings=(() if fsync or options.get("no_fsync")
                                               else (NO_FSYNC_WARNING,))
                            # the plan's own note says so (plan_notes)
                            + ((f"--group {grouped} with",) if grouped and grouped >= r else ()))
                why = why_impossible(p.layout, p.size, p.block, p.ranks, p.files, aggregators)
                if why:
                    skipped.append((p, why))
                else:
                    points.append(p)
        lost = self.absent(preset, options).get("test", {})
        if not points and lost and not skipped:
            # every chosen test runs only at ranks/blocks the user's lists leave out
            whys = {}
            for test_id, why in lost.items():
                whys.setdefault(why, []).append(test_id)
            raise NoRunnablePoint("the plan has no point: " + "; ".join(
                f"{', '.join(ids)}: {why}" for why, ids in whys.items()))
        table = "quick" if quick else "sweep"
        left = (f"{'; '.join(unplanned)}: add the test's values to [{table}]"
                + (" or run without --quick" if quick else "")) if unplanned else ""
        if not points and unplanned and not skipped:
            raise NoRunnablePoint(f"the plan has no point: {left}")
        if not points:
            # Blame only what the user gave; the rest came from the experiment.
            given = [f"--{k}" for k in ("ranks", "blocks", "size") if options.get(k)]
            table = "quick" if quick else "sweep"
            mine = [f"{table}.{k}" for k in ("ranks", "blocks") if not options.get(k)]
            if not options.get("size"):
                # a test's own size (broadcast's 8 MB file) where it has one
                own = {t["id"]: t.get("size") for t in chosen}
                sized = dict.fromkeys(f"test {p.test_id}'s size ({own[p.test_id]})" if own[p.test_id]
                                      else f"{table}.size" for p, _ in skipped)
                mine += list(sized)
            # in the skip lines' own words, so the summary cannot disagree with them
            whys = list(dict.fromkeys(why for _, why in skipped))
            said = "; ".join(whys) if len(whys) <= 2 else "every point is skipped, as said above"
            raise NoRunnablePoint(f"the plan has no runnable point ({said}): check "
                                  f"{' and '.join(given + mine)}" + (f"; and {left}" if left else ""), skipped)
        return points, skipped

    def plan_notes(self, preset, points, options):
        """Where the rank counts came from; grouping that cannot act (G at
        or above the rank count)."""
        out = []
        sweep = sweep_of(preset, bool(options.get("quick")))
        if options.get("ranks") is None and sweep["ranks"] == "slots":
            ranks = sorted({p.ranks for p in points})
            out.append(f"ranks {','.join(map(str, ranks))}: powers of two up to {options.get('slots')} "
                       f"slots ({options.get('slots_from')}; at most {sweep.get('max_ranks', 128)}); "
                       "--ranks to choose others")
        short = {}  # striped files that reach fewer targets than they are striped over
        for p in points:
            if p.stripe_targets and p.stripe_reach()[0] < p.stripe_targets:
                short.setdefault(p.test_id, (p, *p.stripe_reach()))
        out += [f"warning: {t}: a {p.files} file of {format_size(p.file_bytes())} in stripe units of "
                f"{format_size(p.stripe_unit)} reaches {reached} of its {p.stripe_targets} targets: the others "
                f"move nothing, and its per-target rates are over the {reached} that do; --size "
                f"{format_size(size)} or more reaches every target" for t, (p, reached, size) in short.items()]
        idle = {}
        for p in points:
            if p.group and p.group >= p.ranks:
                idle.setdefault((p.test_id, p.group), []).append(p.ranks)
        return out + [f"warning: {test}: group {g} cannot act at {','.join(map(str, sorted(set(rs))))} "
                      f"rank(s) (G >= ranks): those points run ungrouped; give --ranks above {g} to "
                      "see grouping" for (test, g), rs in idle.items()]

    def planned_params(self, plan):
        """What the engine's result would say of the point's flags (its
        io_options: fsync by default where a phase writes, the rest only
        when given, one group turn per call), and no stripe unit or load
        where there is none, as a result's records say it."""
        flags = [*plan.get("extra", []), *plan.get("options", [])]
        unit = flags[flags.index("--group-unit") + 1] if "--group-unit" in flags[:-1] else "call"
        fsync = "--no-fsync" not in flags and ("--fsync" in flags or "write" in plan.get("phases", []))
        return {**plan, "group_unit": unit, "prealloc": "--prealloc" in flags, "fsync": fsync,
                "evict": "--evict" in flags, "direct": "--direct" in flags,
                "stripe_unit": plan.get("stripe_unit") if plan.get("stripe_targets") else None,
                "background_kind": plan.get("background_kind") or None}

    def records(self, point, result):
        from ..model.machine import result_caches  # the model imports this module

        p = result["params"]
        base = {"test": point["test_id"], "title": point["title"], "layout": p["layout"],
                "ranks": result["mpi"]["ranks"], "block": p["block_bytes"], "size": p["size_bytes"],
                "files": p["files"], "api": p["api"], "group": p["group"],
                "group_unit": p["group_unit"], "prealloc": p.get("prealloc"), "fsync": p.get("fsync"),
                "evict": p.get("evict"), "direct": p.get("direct"),
                "fs_type": result.get("target", {}).get("fs_type"),
                "memory_backed": result.get("target", {}).get("memory_backed"),
                # a predicted run's machine: whose caches its headings name
                "caches": result_caches(result),
                **_api_facts(p.get("api_options", {})), **_stripe_facts(result),
                "background": (p.get("background") or {}).get("loaders_per_node", 0),
                "background_kind": point["params"].get("background_kind") or None}
        out = []
        for ph in result["phases"]:
            its = ph["iterations"]
            out.append(Record({**base, "phase": ph["name"]}, {
                "rate": [it["mib_per_s"] for it in its],
                "seconds": [it["seconds"] for it in its],
                "cache": [it.get("cache_resident_fraction") for it in its],
                "per_target_rate": [it.get("per_target_mib_per_s") for it in its],
                "load": [it.get("background_load") for it in its],
            }))
        return out

    def figures(self, preset, records, options):
        """One per (test, phase) in the order measured: rate against
        ranks, a line per block size; then, for each pattern run both
        grouped and ungrouped, one figure with a line per grouping (at the
        largest block, where the report saw grouping matter)."""
        if not preset["sweep"].get("kind_figures", True):
            return []  # the preset draws only its own [[figure]]s
        numbers = {t["id"]: t.get("figures", {}) for t in preset["test"]}
        seen = []
        for r in records:
            key = (r.params["test"], r.params["phase"], r.params["title"])
            if key not in seen:
                seen.append(key)
        tests = list(dict.fromkeys(k[0] for k in seen))
        seen.sort(key=lambda k: (tests.index(k[0]), k[1] != "write"))
        out = []
        for test, phase, title in seen:
            mine = [r for r in records if r.params["test"] == test and r.params["phase"] == phase]
            out.append(Figure(id=f"{test}-{phase}", number=numbers.get(test, {}).get(phase, ""),
                              title=f"{_phase_title(title, phase)} ({{size}} file)",
                              where={"test": test, "phase": phase}, x="ranks", series="block",
                              y="rate", note=self.heading_note(mine)))
        patterns = {}
        for r in records:
            key = (r.params["layout"], r.params["files"], r.params["api"], r.params["phase"])
            patterns.setdefault(key, []).append(r)
        for (layout, files, api, phase), mine in patterns.items():
            groups = {r.params["group"] for r in mine}
            if len(groups) < 2:
                continue
            block = max(r.params["block"] for r in mine)
            involved = list(dict.fromkeys(r.params["test"] for r in mine))
            nums = [numbers.get(t, {}).get(phase) for t in involved]
            nums = [n.replace("Figure ", "") for n in nums if n]
            number = (f"Figures {', '.join(nums[:-1])} and {nums[-1]}" if len(nums) > 1
                      else f"cf. Figure {nums[0]}" if nums else "")
            where = {"layout": layout, "files": files, "api": api, "phase": phase, "block": block}
            out.append(Figure(
                id=f"{layout}{'-per-rank' if files == 'per-rank' else ''}-{phase}-grouping",
                number=number, x="ranks", series="group", y="rate", where=where,
                title=f"{layout.capitalize()} {phase.capitalize()}: grouped and ungrouped "
                      f"({{block}} blocks, {{size}} file)",
                note=self.heading_note(mine)))
        return out

    def unused_options(self, preset, options):
        """--files over tests that set files themselves and differ in it
        (ascired-shared: shared against per-rank) would erase what the
        preset compares and leave its titles ("shared file") wrong."""
        chosen = select_tests(preset, options.get("tests"))
        own = sorted({t["files"] for t in chosen if "files" in t})
        if options.get("files") and len(own) > 1:
            return {"--files": f"the tests of {preset['name']} set their own files and compare them "
                               f"({', '.join(own)}); choose among them with --tests instead"}
        return {}

    def absent(self, preset, options):
        """{"test": {id: why}}: chosen tests with ranks or blocks of their
        own (agg-1 at 1 MiB only) that the user's --ranks/--blocks leave
        without any point."""
        quick = bool(options.get("quick"))
        chosen = select_tests(preset, options.get("tests"))
        if not options.get("tests") and quick:
            chosen = [t for t in chosen if t.get("quick", True)]
        given = {}
        if options.get("ranks"):
            given["ranks"] = (set(int_list(options["ranks"], "--ranks")), str)
        if options.get("blocks"):
            given["blocks"] = ({parse_size(b, "--blocks entry") for b in options["blocks"]}, format_size)
        out = {}
        for t in chosen:
            for key, (have, fmt) in given.items():
                own = [parse_size(v) if key == "blocks" else int(v) for v in t.get(key) or []]
                if own and not have & set(own):
                    what = {"ranks": "ranks", "blocks": "block"}[key]
                    out[t["id"]] = (f"its tests run at {what} {', '.join(fmt(v) for v in own)} only: "
                                    f"--{key} {_given_list(options[key])} leaves them out (give --{key} "
                                    f"with {', '.join(map(str, t[key]))})")
        return {"test": out} if out else {}

    def heading_note(self, records):
        phases = {r.params.get("phase") for r in records}
        return _heading_note(records, phases.pop()) if len(phases) == 1 else ""

    def notes(self, preset, records, options):
        """Eviction that did not take effect, and grouping that could not act."""
        out = []
        leaky = {}
        for r in records:
            if r.params["phase"] != "read" or not r.params.get("evict") or r.params.get("memory_backed"):
                continue
            cached = max((c for c in r.values["cache"] if c is not None), default=0)
            if cached > 0.2:
                leaky.setdefault(r.params["fs_type"], []).append((cached, r.params["test"]))
        for fs, hits in leaky.items():
            worst = max(c for c, _ in hits)
            tests = sorted({t for _, t in hits})
            out.append(f"eviction did not take effect on {fs}: up to {100 * worst:.0f}% of the file "
                       f"was still in the page cache when reads began ({len(hits)} read phase(s) of "
                       f"{', '.join(tests)}): those read rates are partly cache rates; this file "
                       "system ignores POSIX_FADV_DONTNEED, try --direct")
        idle = {}
        for r in records:
            if r.params["group"] and r.params["group"] >= r.params["ranks"]:
                idle.setdefault((r.params["test"], r.params["group"]), set()).add(r.params["ranks"])
        for (test, g), ranks in idle.items():
            out.append(f"{test}: group {g} could not act at {','.join(map(str, sorted(ranks)))} "
                       "rank(s) (G >= ranks): those points ran ungrouped")
        return out


KIND = IoKind()
