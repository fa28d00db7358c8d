"""Kind `bt`: the NHT-1 application I/O benchmark on NPB's BT.

Each (class, ranks) gets a T_C point (BT without I/O) first; every write
method then runs with that T_C handed to the engine, which reports T_T,
R_IO and zeta.  Records carry T_T, R_IO and zeta per point; figures are
the report's: times, R_IO and zeta against processors, a line per method.
The text table follows the report's Tables 2-6."""

from dataclasses import dataclass, field

from .. import schema
from ..errors import UsageError
from ..figures import Figure, Param, Quantity, Record
from . import Kind, Option, csv_list, positive_int
from .io import int_list, select_tests, sweep_of

GRID = {"S": 12, "W": 24, "A": 64, "B": 102, "C": 162}
MODES = ("posix", "independent", "collective", "serial", "per-rank")
_NONE = "T_C (no I/O)"


@dataclass
class BtPoint:
    test_id: str
    title: str
    bt_class: str
    ranks: int
    io: str = "none"
    interval: int = 5
    overlap: bool = False
    extra: list = field(default_factory=list)

    @property
    def tc_key(self):
        return (self.bt_class, self.ranks)

    @property
    def method(self):
        if self.io == "none":
            return _NONE
        return self.io + ("+overlap" if self.overlap else "")

    def engine_args(self, directory, json_path, earlier=None):
        args = ["bt", "--class", self.bt_class, "--json", str(json_path)]
        if self.io != "none":
            args += ["--io", self.io, "--dir", str(directory), "--write-interval", str(self.interval)]
            if self.overlap:
                args.append("--overlap")
            tc = (earlier or {}).get(self.tc_key)
            if tc:
                args += ["--tc", repr(tc)]
        return args + list(self.extra)

    def takes_name(self):
        return self.io != "none"

    def label(self):
        return f"bt class {self.bt_class} ranks={self.ranks} io={self.io}{' overlap' if self.overlap else ''}"

    def summary(self, result):
        return f"T_T {result['t_t_seconds']:.3f} s"

    def remember(self, result, earlier):
        """T_C of a no-I/O run, for the points after it."""
        if self.io == "none":
            earlier[self.tc_key] = result["t_t_seconds"]

    def columns(self):
        return {"title": self.title, "layout": f"bt-{self.bt_class}", "files": "shared",
                "api": self.io, "block_bytes": 0, "size_bytes": 0, "group_size": 0}

    def params(self):
        return {"test": self.test_id, "title": self.title, "class": self.bt_class,
                "ranks": self.ranks, "io": self.io, "interval": self.interval,
                "overlap": self.overlap, "method": self.method, "extra": list(self.extra)}


def _method_of(result):
    p = result["params"]
    if p["io"] == "none":
        return _NONE
    return p["io"] + ("+overlap" if p.get("overlap") else "")


class BtKind(Kind):
    name = "bt"
    description = "NHT-1 application I/O: T_C, T_T, R_IO and zeta of BT per write method"
    options = (
        Option(("--classes",), dict(type=csv_list, help="BT classes, e.g. S,A")),
        Option(("--write-interval",), dict(type=positive_int, help="I_W: write the solution every I_W steps")),
    )
    sweep_keys = {"ranks": schema.POSITIVES, "classes": schema.Type(
        "list of classes", lambda v: schema.STRINGS.check(v) or next(
            (f"'{c}' is not a BT class: use S, W, A, B or C" for c in v if c.upper() not in GRID), None)),
        "write_interval": schema.POSITIVE}
    required_sweep = ("ranks", "classes")
    test_keys = {"id": schema.STRING, "title": schema.STRING, "io": schema.one_of(*MODES),
                 "overlap": schema.BOOL}
    required_test = ("id", "io")
    params = {"ranks": Param("processors", str, "log2"), "class": Param("class"),
              "N": Param("N"), "method": Param("write method"), "io": Param("io"),
              "test": Param("test"), "interval": Param("I_W")}
    quantities = {"t_t": Quantity("time", "s", "min", ".3f"),
                  "r_io": Quantity("R_IO", "bytes/s", "max", ".1f"),
                  "zeta": Quantity("zeta", "", "min", ".4f")}

    def describe(self, preset):
        sweep = preset["sweep"]
        lines = [f"ranks {','.join(map(str, sweep['ranks']))}; classes {','.join(sweep['classes'])}; "
                 f"write every {sweep.get('write_interval', 5)} steps"]
        lines += [f"- {t['id']}: {t.get('title', t['io'])}" for t in preset["test"]]
        return lines

    def plan(self, preset, options):
        sweep = sweep_of(preset, bool(options.get("quick")))
        rank_list = int_list(options.get("ranks") or sweep["ranks"], "--ranks")
        class_list = [c.upper() for c in (options.get("classes") or sweep["classes"])]
        for c in class_list:
            if c not in GRID:
                raise UsageError(f"--classes {c} is unknown: use S, W, A, B or C")
        chosen = select_tests(preset, options.get("tests"))
        interval = options.get("write_interval") or int(sweep.get("write_interval", 5))
        points, skipped = [], []
        for c in class_list:
            for r in rank_list:
                base = BtPoint("none", "no I/O (T_C)", c, r)
                if r > GRID[c]:
                    skipped.append((base, f"class {c} has {GRID[c]} planes: at most {GRID[c]} ranks"))
                    continue
                points.append(base)
                for t in chosen:
                    points.append(BtPoint(t["id"], t.get("title", t["id"]), c, r, io=t["io"],
                                          interval=interval, overlap=bool(t.get("overlap", False))))
        if not points:
            raise UsageError("the plan has no runnable point: check --ranks and --classes")
        return points, skipped

    def records(self, point, result):
        p = result["params"]
        zeta = result.get("zeta")
        return [Record({"test": point["test_id"], "class": p["class"], "N": p["grid"],
                        "ranks": p["ranks"], "io": p["io"], "method": _method_of(result),
                        "interval": p.get("write_interval") or None},
                       {"t_t": [result["t_t_seconds"]],
                        "r_io": [result["io"]["r_io_bytes_per_s"]] if p["io"] != "none" else [],
                        "zeta": [zeta] if p["io"] != "none" and zeta is not None else []})]

    def figures(self, preset, records, options):
        classes = sorted({r.params["class"] for r in records}, key="SWABC".index)
        out = []
        for c in classes:
            where = {"class": c}
            out += [
                Figure(id=f"bt{c}-time", title=f"BT class {c} (N={{N}}): T_C and T_T", x="ranks",
                       series="method", y="t_t", where=where),
                Figure(id=f"bt{c}-rio", title=f"BT class {c} (N={{N}}): R_IO", x="ranks",
                       series="method", y="r_io", unit="MB/s", where=where),
                Figure(id=f"bt{c}-zeta", title=f"BT class {c} (N={{N}}): zeta = T_T/T_C - 1",
                       x="ranks", series="method", y="zeta", where=where),
            ]
        return out

    def tables(self, preset, records, options):
        """One table per class: ranks x (T_C, then T_T / R_IO / zeta per method)."""
        lines = []
        for cls in sorted({r.params["class"] for r in records}, key="SWABC".index):
            mine = [r for r in records if r.params["class"] == cls]
            n = mine[0].params["N"]
            modes = []
            for r in mine:
                if r.params["io"] != "none" and r.params["method"] not in modes:
                    modes.append(r.params["method"])
            interval = max((r.params["interval"] or 0) for r in mine) or "-"
            lines.append(f"\nBT class {cls} (N={n}), I_W={interval}: seconds, R_IO in MB/s (1e6 bytes)")
            lines.append(f"{'ranks':>5} {'T_C':>9}" + "".join(f" | {m:^29}" for m in modes))
            lines.append(f"{'':>5} {'':>9}" + "".join(f" | {'T_T':>9} {'R_IO':>9} {'zeta':>9}" for _ in modes))
            for rk in sorted({r.params["ranks"] for r in mine}):
                at = {r.params["method"]: r for r in mine if r.params["ranks"] == rk}
                tc = at.get(_NONE)
                cells = f"{rk:>5} {min(tc.values['t_t']) if tc else float('nan'):>9.3f}"
                for m in modes:
                    r = at.get(m)
                    if r is None:
                        cells += f" | {'-':>9} {'-':>9} {'-':>9}"
                        continue
                    zeta = r.values["zeta"][0] if r.values["zeta"] else float("nan")
                    cells += (f" | {r.values['t_t'][0]:>9.3f} {r.values['r_io'][0] / 1e6:>9.1f} "
                              f"{zeta:>9.4f}")
                lines.append(cells)
            if any(r.values["zeta"] and r.values["zeta"][0] < 0 for r in mine):
                lines.append("  note: a negative zeta means T_T fell inside the noise of T_C: the run is "
                             "too short to show its I/O cost; use a larger class (A, B)")
        return ["\n".join(lines)] if lines else []


KIND = BtKind()
