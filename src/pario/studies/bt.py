"""Kind `bt`: the NHT-1 application I/O benchmark on NPB's BT
(seeds/nht1-application-io-fineberg-1993.txt), as the report ran it.

* I_W per class from the report's Table 1: 10 for N=12 (class S), 5 for
  the others, unless the preset or --write-interval sets it.
* T_C is "the best verified run time": every (class, ranks) runs N rounds
  (--iterations, the preset's `iterations`, 3 by default); a round is one
  BT run without I/O (T_C) then one per write method (T_T), so slow
  drift of the machine falls on all of them alike.  A run that fails
  verification (the solution, or the file read back) is a failed point,
  never a trial.  Each T_T run is handed the best T_C so far for its own
  zeta; the tables and figures use best T_T against best T_C, with the
  range every pairing of trials gives beside it.
* Tables shaped like the report's Tables 2-6, one per write method: N,
  processors, T_C (s), T_T (s), R_IO (bytes/s, from the report's formula
  5 w N^3 N_S / (I_W T_T) with the printed T_T), zeta to three decimals;
  beside them NPB BTIO's own statistics of the best T_T run, as NPB
  3.3.1/3.4.0 print them (REFERENCE-FACTS 2.6): I/O time (the harmonic
  mean over ranks of each rank's write-and-close time), its percentage of
  T_T, MB written (1e6 bytes) and MB/s.
* The engine decomposes as NPB does on square rank counts (multi-partition)
  and in z slabs otherwise; the records say which.
* Figures: T_C and T_T against processors (the report's Figure 2),
  R_IO in MiB/s (Figure 4), zeta with the 0.1 NAS considers acceptable
  (Figure 5), one colour per method on all of them; and for a test with
  `grouped = true`, T_T against the write group size (Figure 1), one point
  per group size below the rank count (--groups)."""

from dataclasses import dataclass, field, replace

from .. import schema
from ..errors import NoRunnablePoint, UsageError
from ..figures import Figure, Param, Quantity, Record
from . import Kind, Option, SizeSetting, csv_list, positive_int, refuse_repeats
from .io import int_list, rounds_of, select_tests, setting, sweep_of

GRID = {"S": 12, "W": 24, "A": 64, "B": 102, "C": 162}
MODES = ("posix", "fortran", "independent", "collective", "serial", "per-rank")
GROUPABLE = ("posix", "independent", "per-rank")   # the engine's --group takes these
_NONE = "T_C (no I/O)"
ACCEPTABLE_ZETA = 0.1   # "an overhead of 10% (0.1) to be acceptable" (the report, section 5)


# NPB BTIO's "BTIO -- statistics" block, as the engine measures it
# (REFERENCE-FACTS 2.6, NPB 3.3.1/3.4.0's rule); shared with the btio kind.
NPB_IO_QUANTITIES = {"npb_io_s": Quantity("NPB I/O time", "s", "min", ".2f"),
                     "npb_io_pct": Quantity("NPB I/O percentage", "%", "min", ".2f"),
                     "npb_mb": Quantity("NPB total data written", "MB", "max", ".2f"),
                     "npb_mbps": Quantity("NPB I/O data rate", "MB/s", "max", ".2f")}
NPB_IO_HEAD = f"{'I/O (secs)':>10} {'I/O %':>7} {'MB':>9} {'MB/sec':>9}"
NPB_IO_NOTE = ("NPB BTIO's statistics (NPB 3.3.1/3.4.0 rule): I/O secs = 1/mean over ranks of "
               "1/(rank's write + close time); I/O % of T_T; MB = 1e6 bytes written; MB/sec = MB / I/O secs")


def npb_io_values(result):
    """NPB's I/O figures of a result document ({} without I/O)."""
    io = result.get("io", {})
    if io.get("npb_io_seconds") is None:
        return {"npb_io_s": [], "npb_io_pct": [], "npb_mb": [], "npb_mbps": []}
    return {"npb_io_s": [io["npb_io_seconds"]], "npb_io_pct": [io["npb_io_percent"]],
            "npb_mb": [io["npb_mbytes_written"]], "npb_mbps": [io["npb_io_mb_per_s"]]}


def npb_io_row(values):
    """The four NPB columns of a record, as NPB prints them (two decimals)."""
    if not values.get("npb_io_s"):
        return ""
    return (f"{values['npb_io_s'][0]:>10.2f} {values['npb_io_pct'][0]:>7.2f} "
            f"{values['npb_mb'][0]:>9.2f} {values['npb_mbps'][0]:>9.2f}")


def report_interval(grid):
    """I_W of the report's Table 1: 10 for N=12, 5 for N=64 and N=102."""
    return 10 if grid == 12 else 5


@dataclass
class BtPoint:
    test_id: str
    title: str
    bt_class: str
    ranks: int
    io: str = "none"
    interval: int = 5
    overlap: bool = False
    group: int = 0
    trial: int = 1
    extra: list = field(default_factory=list)

    @property
    def tc_key(self):
        return (self.bt_class, self.ranks)

    @property
    def method(self):
        return _method(self.io, self.overlap, self.group)

    def engine_args(self, directory, json_path, earlier=None):
        args = ["bt", "--class", self.bt_class, "--json", str(json_path)]
        if self.io != "none":
            args += ["--io", self.io, "--dir", str(directory), "--write-interval", str(self.interval)]
            if self.overlap:
                args.append("--overlap")
            if self.group:
                args += ["--group", str(self.group)]
            tc = (earlier or {}).get(self.tc_key)
            if tc:
                args += ["--tc", repr(tc)]
        return args + list(self.extra)

    def takes_name(self):
        return self.io != "none"

    def label(self):
        return (f"bt class {self.bt_class} ranks={self.ranks} {self.method} "
                f"(round {self.trial})")

    def summary(self, result):
        return f"T_T {result['t_t_seconds']:.3f} s"

    def remember(self, result, earlier):
        """The best T_C so far of a (class, ranks), for the T_T runs after it."""
        if self.io == "none":
            t = result["t_t_seconds"]
            earlier[self.tc_key] = min(t, earlier.get(self.tc_key, t))

    def columns(self):
        return {"title": self.title, "layout": f"bt-{self.bt_class}", "files": "shared",
                "api": self.io, "block_bytes": 0, "size_bytes": 0, "group_size": self.group}

    def params(self):
        return {"test": self.test_id, "title": self.title, "class": self.bt_class,
                "ranks": self.ranks, "io": self.io, "interval": self.interval,
                "overlap": self.overlap, "group": self.group, "trial": self.trial,
                "method": self.method, "extra": list(self.extra)}


def _method(io, overlap, group):
    if io == "none":
        return _NONE
    return io + ("+overlap" if overlap else "") + (f" G={group}" if group else "")


def _fmt4(v):
    """Four significant digits, as the report prints times (9.694, 1381)."""
    return f"{v:.4g}" if v < 1e4 else f"{v:.0f}"


# --classes: taken by both BT kinds (bt and btio); one Option, so the flag
# is added once and each kind that lists it accepts it.
CLASSES_OPTION = Option(("--classes",), dict(type=csv_list, help="BT classes, e.g. S,A"))


def classes_problem(value):
    """What is wrong with a file's list of BT classes, or None: not strings,
    a class BT has not, one given twice in either case."""
    problem = schema.STRINGS.check(value)
    if problem:
        return problem
    for c in value:
        if c.upper() not in GRID:
            return f"'{c}' is not a BT class: use S, W, A, B or C"
    upper = [c.upper() for c in value]
    twice = next((c for i, c in enumerate(value) if upper[i] in upper[:i]), None)
    return f"names class {twice.upper()} twice: give each class once" if twice else None


def check_classes(classes, shown="--classes"):
    """--classes (or a file's classes, `shown`), upper-cased; an unknown
    class, or one given twice in either case (S,s: every point twice,
    tester 19), refused in one line."""
    out = [c.upper() for c in classes]
    for c in out:
        if c not in GRID:
            raise UsageError(f"{shown} {c} is unknown: use S, W, A, B or C")
    return refuse_repeats(out, f"{shown} {','.join(classes)}", names=classes)


class BtKind(Kind):
    name = "bt"
    size_setting = SizeSetting("--class", "classes", "--classes")
    description = "NHT-1 application I/O: T_C, T_T, R_IO and zeta of BT per write method"
    options = (
        CLASSES_OPTION,
        Option(("--iterations",), dict(type=positive_int, help="trials per point (best is reported)")),
        Option(("--write-interval",), dict(type=positive_int,
                                           help="I_W: write the solution every I_W steps (default: the "
                                                "report's Table 1, 10 for class S, else 5)")),
        Option(("--groups",), dict(type=csv_list, help="write group sizes for the grouped-writing "
                                                       "test (the report's Figure 1), e.g. 1,2,4,8,16")),
    )
    sweep_keys = {
        "ranks": schema.POSITIVES,
        "classes": schema.Type("list of classes", classes_problem),
        "write_interval": schema.POSITIVE, "iterations": schema.POSITIVE, "groups": schema.POSITIVES}
    required_sweep = ("ranks", "classes")
    test_keys = {"id": schema.ID, "title": schema.STRING, "io": schema.one_of(*MODES),
                 "overlap": schema.BOOL, "grouped": schema.BOOL}
    required_test = ("id", "io")
    params = {"ranks": Param("processors", str, "log2"), "class": Param("class"),
              "N": Param("N"), "io": Param("io"),
              "method": Param("write method", order=(_NONE, *MODES, "posix+overlap", "per-rank+overlap")),
              "test": Param("test"), "interval": Param("I_W"),
              "group": Param("write group size", str, "log2"), "trial": Param("round"),
              "decomposition": Param("decomposition")}
    quantities = {"t_t": Quantity("time", "s", "min", ".4g"),
                  "r_io": Quantity("R_IO", "bytes/s", "max", ".1f"),
                  "zeta": Quantity("zeta", "", "min", ".3f"),
                  **NPB_IO_QUANTITIES}
    compared = {"t_t": "T_T", "npb_mbps": "NPB I/O rate"}
    facts = ("steps", "memory_backed", "overlap", "extra")

    def measures(self, record):
        """T_T and NPB's I/O rate; a run without I/O measured T_C."""
        out = super().measures(record)
        if record.params["io"] == "none":
            return [replace(m, name="T_C") for m in out if m.key == "t_t"]
        return out

    def check(self, preset, path):
        for i, t in enumerate(preset["test"], 1):
            if t.get("grouped") and t["io"] not in GROUPABLE:
                raise schema.PresetError(path, f"test[{i}].grouped", f"io {t['io']} cannot write in "
                                         f"groups: use one of {', '.join(GROUPABLE)}")
            if t.get("grouped") and t.get("overlap"):
                raise schema.PresetError(path, f"test[{i}].grouped", "grouped writing and overlap "
                                         "cannot be combined")

    def describe(self, preset):
        sweep = preset["sweep"]
        iw = sweep.get("write_interval")
        lines = [f"ranks {','.join(map(str, sweep['ranks']))}; classes {','.join(sweep['classes'])}; "
                 f"write every {iw if iw else 'I_W of the report (10 for S, else 5)'} steps; "
                 f"best of {sweep.get('iterations', 3)} verified run{'s' * (sweep.get('iterations', 3) != 1)}"]
        for t in preset["test"]:
            groups = (f", write groups {','.join(map(str, sweep.get('groups', [])))}"
                      if t.get("grouped") else "")
            lines.append(f"- {t['id']}: {t.get('title', t['io'])}{groups}")
        return lines

    def plan(self, preset, options):
        sweep = sweep_of(preset, bool(options.get("quick")))
        rank_list = int_list(*setting(options, preset, "ranks", "--ranks"))
        class_list = check_classes(options.get("classes") or sweep["classes"],
                                   "--classes" if options.get("classes") else "the experiment's classes")
        groups = int_list(options.get("groups") or sweep.get("groups") or [1], "--groups")
        chosen = select_tests(preset, options.get("tests"))
        if options.get("groups") and not any(t.get("grouped") for t in chosen):
            raise UsageError("--groups sizes the grouped-writing test, and none of the chosen tests "
                             "is grouped: add one to --tests (see 'pario presets')")
        rounds = rounds_of(options, preset, 3)
        points, skipped = [], []
        for c in class_list:
            interval = (options.get("write_interval") or sweep.get("write_interval")
                        or report_interval(GRID[c]))
            for r in rank_list:
                if r > GRID[c]:
                    skipped.append((BtPoint("none", "no I/O (T_C)", c, r),
                                    f"class {c} has {GRID[c]} planes: at most {GRID[c]} ranks"))
                    continue
                for trial in range(1, rounds + 1):
                    points.append(BtPoint("none", "no I/O (T_C)", c, r, trial=trial))
                    for t in chosen:
                        kw = dict(io=t["io"], interval=interval, overlap=bool(t.get("overlap", False)),
                                  trial=trial)
                        title = t.get("title", t["id"])
                        if not t.get("grouped"):
                            points.append(BtPoint(t["id"], title, c, r, **kw))
                            continue
                        for g in groups:
                            p = BtPoint(t["id"], title, c, r, group=g, **kw)
                            if g < r:
                                points.append(p)
                            elif trial == 1:
                                skipped.append((p, f"write group {g} cannot act at {r} rank(s)"))
        # what was asked for and left out is said (class S has 12 planes, a
        # write group that cannot act), never a bare "no runnable point", nor
        # a plan of the T_C baseline alone for tests that all fell out
        if not any(p.test_id != "none" for p in points) and chosen:
            whys = list(dict.fromkeys(why for _, why in skipped))
            raise NoRunnablePoint("the plan has no runnable point of " + ", ".join(t["id"] for t in chosen)
                                  + (f" ({'; '.join(whys)})" if whys else "")
                                  + ": check --ranks, --classes and --groups", skipped)
        return points, skipped

    def records(self, point, result):
        p = result["params"]
        v = result["verification"]
        verified = v.get("ok") and (p["io"] == "none" or not v.get("file_checked") or v.get("file_ok"))
        if not verified:
            return []   # "the best verified run time": an unverified run is no trial
        return [Record({"test": point["test_id"], "class": p["class"], "N": p["grid"],
                        "steps": p["steps"], "ranks": p["ranks"], "io": p["io"],
                        "method": _method(p["io"], p.get("overlap"), p.get("group", 0)),
                        "interval": p.get("write_interval") or None, "group": p.get("group", 0),
                        "trial": point["params"].get("trial", 1),
                        "decomposition": p.get("decomposition", "slabs"),
                        "memory_backed": result.get("target", {}).get("memory_backed")},
                       {"t_t": [result["t_t_seconds"]], "r_io": [], "zeta": [],
                        **npb_io_values(result)})]

    def finish(self, records):
        """R_IO by the report's formula, and zeta against the best T_C of
        the same class and ranks (not the T_C a run was handed)."""
        best_tc = {}
        for r in records:
            if r.params["io"] == "none":
                key = (r.params["class"], r.params["ranks"])
                best_tc[key] = min(r.values["t_t"] + [best_tc.get(key, float("inf"))])
        for r in records:
            if r.params["io"] == "none":
                continue
            n, tt = r.params["N"], r.values["t_t"][0]
            r.values["r_io"] = [r_io(n, r.params["steps"], r.params["interval"], tt)]
            tc = best_tc.get((r.params["class"], r.params["ranks"]))
            r.values["zeta"] = [tt / tc - 1] if tc else []
        return records

    def figures(self, preset, records, options):
        classes = sorted({r.params["class"] for r in records}, key="SWABC".index)
        out = []
        for c in classes:
            flat = {"class": c, "group": 0}
            iw = ",".join(str(i) for i in sorted({r.params["interval"] for r in records
                                                  if r.params["class"] == c and r.params["interval"]}))
            # with every I/O point failed only T_C was measured: the title
            # says so rather than naming an I_W no point of the figure ran
            timed = f"BT class {c} (N={{N}}, I_W={iw}): T_C and T_T" if iw else \
                f"BT class {c} (N={{N}}): T_C (no I/O run measured)"
            out += [
                Figure(id=f"bt{c}-time", number="Figure 2", title=timed, x="ranks",
                       series="method", y="t_t", where=flat, spread=True),
                Figure(id=f"bt{c}-rio", number="Figure 4", title=f"BT class {c} (N={{N}}): R_IO",
                       x="ranks", series="method", y="r_io", unit="MiB/s",
                       where={**flat, "io": [m for m in MODES]}, spread=True),
                Figure(id=f"bt{c}-zeta", number="Figure 5",
                       title=f"BT class {c} (N={{N}}): zeta = T_T/T_C - 1 (best T_T, best T_C)",
                       x="ranks", series="method", y="zeta", where={**flat, "io": list(MODES)},
                       spread=True, lines=((ACCEPTABLE_ZETA, "0.1: acceptable overhead (NAS)"),)),
            ]
            grouped = [r for r in records if r.params["class"] == c and r.params["group"]]
            if grouped:
                out.append(Figure(
                    id=f"bt{c}-groups", number="Figure 1",
                    title=f"Effect of grouped writing, BT class {c} (N={{N}}): T_T against write "
                          "group size", x="group", series="ranks", y="t_t",
                    where={"class": c, "test": sorted({r.params["test"] for r in grouped})},
                    spread=True))
        return out

    def tables(self, preset, records, options):
        """One table per write method, shaped like the report's Tables 2-6."""
        tc = {}
        for r in records:
            if r.params["io"] == "none":
                tc.setdefault((r.params["class"], r.params["ranks"]), []).extend(r.values["t_t"])
        methods = list(dict.fromkeys(r.params["method"] for r in records
                                     if r.params["io"] != "none" and not r.params["group"]))
        titles = {t["id"]: t.get("title", t["id"]) for t in preset["test"]}
        out = []
        for m in methods:
            mine = [r for r in records if r.params["method"] == m]
            rows = {}
            for r in mine:
                rows.setdefault((r.params["class"], r.params["ranks"]), []).append(r)
            tests = sorted({titles.get(r.params["test"], r.params["test"]) for r in mine})
            trials = max(len(v) for v in rows.values())
            lines = [f"\nNHT-1, write method {m} ({'; '.join(tests)}): the report's Tables 2-6, "
                     f"best of {trials} verified run{'s' * (trials != 1)}; the file is synced before it is closed"]
            head = (f"{'N':>5} {'No. Proc.':>9} {'I_W':>4} {'T_C (secs)':>11} {'T_T (secs)':>11} "
                    f"{'R_IO (bytes/sec)':>17} {'zeta':>7}   {'zeta range':<17} {'runs':>4}   "
                    f"{NPB_IO_HEAD}")
            lines.append(head)
            negative = False
            for (cls, ranks) in sorted(rows, key=lambda k: ("SWABC".index(k[0]), k[1])):
                group = rows[(cls, ranks)]
                tts = [r.values["t_t"][0] for r in group]
                tcs = tc.get((cls, ranks), [])
                first = group[0].params
                best = min(group, key=lambda r: r.values["t_t"][0])
                # From the measured times, as the figures and the export: the
                # same zeta and R_IO in each (tester 19: 0.094 here, 0.093 in
                # Figure 5).  The range from them too, so it holds the zeta
                # (min/max of every pairing; tester 15: -0.029 beside
                # [-0.030, -0.030] when the two came from different times).
                t_t = min(tts)
                rate = r_io(first["N"], first["steps"], first["interval"], t_t)
                if tcs:
                    zeta = t_t / min(tcs) - 1
                    low, high = min(tts) / max(tcs) - 1, max(tts) / min(tcs) - 1
                    negative = negative or zeta < 0
                    tc_text, zeta_text = _fmt4(min(tcs)), f"{zeta:.3f}"
                    range_text = f"[{low:.3f}, {high:.3f}]"
                else:
                    tc_text, zeta_text, range_text = "-", "-", "-"
                lines.append(f"{first['N']:>5} {ranks:>9} {first['interval']:>4} {tc_text:>11} "
                             f"{_fmt4(min(tts)):>11} {rate:>17.0f} {zeta_text:>7}   {range_text:<17} "
                             f"{f'{len(tts)}/{len(tcs)}':>4}   {npb_io_row(best.values)}".rstrip())
            lines.append("  R_IO = 5 w N^3 N_S / (I_W T_T), w = 8 bytes, N_S / I_W the dumps written; "
                         "zeta = T_T / T_C - 1, both best; "
                         "zeta range: every pairing of T_T and T_C runs; runs: T_T/T_C")
            lines.append(f"  {NPB_IO_NOTE} (of the best T_T run)")
            if negative:
                lines.append("  note: a negative zeta means the best T_T fell inside the noise of T_C: "
                             "read it with its range; a larger class (A, B) shows the I/O cost")
            out.append("\n".join(lines))
        return out


def r_io(n, steps, interval, t_t):
    """The report's R_IO = 5 w N^3 N_S / (I_W T_T), bytes per second, w = 8,
    with N_S / I_W the dumps the solver writes: one every I_W steps and one
    at the last step (engine/src/kernels/bt/bt_cmd.c), so an I_W that does
    not divide N_S counts the dumps written (60 steps at I_W 7: 9, not
    8.57; at I_W 1000: 1, not 0.06, tester 15)."""
    dumps = steps // interval + (1 if steps % interval else 0)
    return 5 * 8 * n ** 3 * dumps / t_t


KIND = BtKind()
