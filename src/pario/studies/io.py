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

from dataclasses import dataclass, field

from .. import schema
from ..errors import UsageError
from ..figures import Figure, Param, Quantity, Record, size_param
from ..units import engine_size, format_size, parse_size
from . import Kind, Option, csv_list, positive_int

# The engine's layout table (engine/src/io/layout.c): names a preset may use.
LAYOUTS = ("broadcast", "partitioned", "interleaved", "random")
APIS = ("posix",)
PHASES = ("write", "read")


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

    def engine_args(self, directory, json_path, earlier=None):
        args = ["io", "--dir", str(directory), "--layout", self.layout, "--files", self.files,
                "--api", self.api, "--block", engine_size(self.block),
                "--size", engine_size(self.size), "--phases", ",".join(self.phases),
                "--iterations", str(self.iterations), "--json", str(json_path)]
        if self.group:
            args += ["--group", str(self.group)]
        return args + list(self.extra)

    def takes_name(self):
        return True

    def remember(self, result, earlier):
        """Nothing here feeds later points."""

    def summary(self, result):
        return ", ".join(f"{ph['name']} {ph['summary']['best_mib_per_s']:.0f} MiB/s"
                         for ph in result["phases"])

    def label(self):
        return f"{self.test_id} ranks={self.ranks} block={format_size(self.block)}"

    def columns(self):
        return {"title": self.title, "layout": self.layout, "files": self.files, "api": self.api,
                "block_bytes": self.block, "size_bytes": self.size, "group_size": self.group}

    def params(self):
        return {"test": self.test_id, "title": self.title, "layout": self.layout,
                "phases": list(self.phases), "ranks": self.ranks, "block": self.block,
                "size": self.size, "group": self.group, "files": self.files, "api": self.api,
                "iterations": self.iterations, "extra": list(self.extra)}


def why_impossible(layout, size, block, ranks, files):
    if block % 8:
        return "block is not a multiple of 8 bytes"
    if layout == "broadcast":
        return None if size % block == 0 and block <= size else "size is not a whole number of blocks"
    per_file = size // ranks if files == "per-rank" else size
    sharers = 1 if files == "per-rank" else ranks
    if size % ranks and files == "per-rank":
        return "size does not split into per-rank files"
    if block > per_file // sharers:
        return "block is larger than a rank's share"
    if per_file % (block * sharers):
        return "size is not a whole number of ranks x blocks"
    return None


def int_list(values, what):
    try:
        out = [int(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{what} must be whole numbers, e.g. 1,2,4,8") from exc
    if not out or any(v <= 0 for v in out):
        raise UsageError(f"{what} must be whole numbers of at least 1, e.g. 1,2,4,8")
    return out


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


def _phase_title(title, phase):
    return title if title.lower().endswith(phase) else f"{title} {phase.capitalize()}"


class IoKind(Kind):
    name = "io"
    description = "access patterns: rate against ranks and block size, per layout and grouping"
    options = (
        Option(("--blocks",), dict(type=csv_list, help="block sizes, e.g. 4k,64k,1m")),
        Option(("--size",), dict(help="file size for every test (default: the preset's)")),
        Option(("--iterations",), dict(type=positive_int, help="trials per point (best is reported)")),
        Option(("--files",), dict(choices=["shared", "per-rank"], help="one shared file or one per rank")),
        Option(("--evict",), dict(action="store_true", help="drop files from the page cache before reads")),
        Option(("--direct",), dict(action="store_true", help="O_DIRECT I/O")),
        Option(("--verify",), dict(action="store_true", help="check every byte after each phase (untimed)")),
        Option(("--group-unit",), dict(choices=["call", "rank"],
                                       help="grouped tests: one call (default, as the CFS report) or a "
                                            "rank's whole share per token")),
    )
    sweep_keys = {"ranks": schema.POSITIVES, "blocks": schema.SIZES, "size": schema.SIZE,
                  "iterations": schema.POSITIVE}
    required_sweep = ("ranks", "blocks", "size")
    test_keys = {
        "id": schema.STRING, "title": schema.STRING, "layout": schema.one_of(*LAYOUTS),
        "phases": schema.Type("list of write/read", lambda v: schema.STRINGS.check(v) or next(
            (f"'{p}' is not a phase: use write and/or read" for p in v if p not in PHASES), None)),
        "size": schema.SIZE, "group": schema.POSITIVE, "files": schema.one_of("shared", "per-rank"),
        "api": schema.one_of(*APIS), "quick": schema.BOOL,
        "figures": schema.Type("table of phase = \"Figure N\"", lambda v: None if isinstance(v, dict) and all(
            k in PHASES and isinstance(x, str) for k, x in v.items())
            else "is not a table like { write = \"Figure 6\", read = \"Figure 7\" }"),
    }
    required_test = ("id", "layout", "phases")
    params = {
        "test": Param("test"), "title": Param("test"), "layout": Param("layout"),
        "phase": Param("phase"), "ranks": Param("ranks", str, "log2"), "block": size_param("block"),
        "size": size_param("file size"), "files": Param("files"), "api": Param("api"),
        "group": Param("group", lambda g: f"G={g}" if g else "ungrouped"),
        "group_unit": Param("group unit"),
    }
    quantities = {
        "rate": Quantity("", "MiB/s", "max"),
        "seconds": Quantity("time", "s", "min", ".4f"),
        "cache": Quantity("page cache residency", "fraction", "min", ".2f"),
    }

    def check(self, preset, path):
        for i, t in enumerate(preset["test"], 1):
            if t["layout"] == "broadcast" and "write" in t["phases"]:
                raise schema.PresetError(path, f"test[{i}].phases",
                                         "layout broadcast only reads: use phases = [\"read\"]")

    def describe(self, preset):
        sweep = preset["sweep"]
        lines = [f"ranks {','.join(map(str, sweep['ranks']))}; blocks {','.join(sweep['blocks'])}; "
                 f"size {sweep['size']}; best of {sweep.get('iterations', 3)}"]
        for t in preset["test"]:
            group = f", group {t['group']}" if t.get("group") else ""
            lines.append(f"- {t['id']}: {t['layout']} {'/'.join(t['phases'])}{group}")
        return lines

    def plan(self, preset, options):
        quick = bool(options.get("quick"))
        sweep = sweep_of(preset, quick)
        ranks = options.get("ranks")
        rank_list = int_list(ranks if ranks is not None else sweep["ranks"], "--ranks")
        block_list = [parse_size(b, "--blocks entry") for b in (options.get("blocks") or sweep["blocks"])]
        iters = options.get("iterations") or int(sweep.get("iterations", 3))
        tests = options.get("tests")
        chosen = select_tests(preset, tests)
        if not tests and quick:
            chosen = [t for t in chosen if t.get("quick", True)]
        extra = [f"--{flag}" for flag in ("evict", "direct", "verify") if options.get(flag)]
        unit = options.get("group_unit")

        points, skipped = [], []
        for test in chosen:
            # A preset's per-test size (broadcast's 8 MB file) is kept unless the
            # user sets one size for everything.
            size = options.get("size")
            test_size = parse_size(size if size else test.get("size", sweep["size"]), "--size")
            grouped = int(test.get("group", 0))
            for r in rank_list:
                for b in block_list:
                    p = IoPoint(test_id=test["id"], title=test.get("title", test["id"]),
                                layout=test["layout"], phases=list(test["phases"]), ranks=r, block=b,
                                size=test_size, group=grouped,
                                files=options.get("files") or test.get("files", "shared"),
                                api=test.get("api", "posix"), iterations=iters,
                                extra=extra + (["--group-unit", unit] if unit and grouped else []))
                    why = why_impossible(p.layout, p.size, p.block, p.ranks, p.files)
                    if why:
                        skipped.append((p, why))
                    else:
                        points.append(p)
        if not points:
            raise UsageError("the plan has no runnable point: check --ranks, --blocks and --size "
                             "(each rank needs at least one whole block)")
        return points, skipped

    def records(self, point, result):
        p = result["params"]
        base = {"test": point["test_id"], "title": point["title"], "layout": p["layout"],
                "ranks": result["mpi"]["ranks"], "block": p["block_bytes"], "size": p["size_bytes"],
                "files": p["files"], "api": p["api"], "group": p["group"],
                "group_unit": p["group_unit"]}
        out = []
        for ph in result["phases"]:
            its = ph["iterations"]
            out.append(Record({**base, "phase": ph["name"]}, {
                "rate": [it["mib_per_s"] for it in its],
                "seconds": [it["seconds"] for it in its],
                "cache": [it.get("cache_resident_fraction") for it in its],
            }))
        return out

    def figures(self, preset, records, options):
        """One per (test, phase) in the order measured: rate against
        ranks, a line per block size."""
        numbers = {t["id"]: t.get("figures", {}) for t in preset["test"]}
        seen = []
        for r in records:
            key = (r.params["test"], r.params["phase"], r.params["title"])
            if key not in seen:
                seen.append(key)
        tests = list(dict.fromkeys(k[0] for k in seen))
        seen.sort(key=lambda k: (tests.index(k[0]), k[1] != "write"))
        return [Figure(id=f"{test}-{phase}", number=numbers.get(test, {}).get(phase, ""),
                       title=f"{_phase_title(title, phase)} ({{size}} file)",
                       where={"test": test, "phase": phase}, x="ranks", series="block", y="rate")
                for test, phase, title in seen]


KIND = IoKind()
