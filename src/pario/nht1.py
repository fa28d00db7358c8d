"""The NHT-1 study: BT points, their table and their figures.

Each (class, ranks) gets a T_C point (BT without I/O) first; every write
mode then runs with that T_C handed to the engine, which reports T_T,
R_IO and zeta.  Tables follow the report's Tables 2-6 (N, ranks, T_C, T_T,
R_IO, zeta); figures its Figures 2, 4 and 5."""

import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .plan import select_tests

_GRID = {"S": 12, "W": 24, "A": 64, "B": 102, "C": 162}


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
    # what the store's point columns hold for a BT point
    files: str = "shared"
    block: int = 0
    size: int = 0
    group: int = 0

    @property
    def layout(self):
        return f"bt-{self.bt_class}"

    @property
    def api(self):
        return self.io

    @property
    def tc_key(self):
        return (self.bt_class, self.ranks)

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


def plan_nht1(preset, quick=False, ranks=None, classes=None, tests=None):
    sweep = dict(preset["sweep"])
    if quick and "quick" in preset:
        sweep.update(preset["quick"])
    rank_list = [int(r) for r in (ranks or sweep["ranks"])]
    class_list = [c.upper() for c in (classes or sweep["classes"])]
    for c in class_list:
        if c not in _GRID:
            raise UsageError(f"--classes {c} is unknown: use S, W, A, B or C")
    if any(r <= 0 for r in rank_list):
        raise UsageError("--ranks must be whole numbers of at least 1, e.g. 1,2,4,9")
    chosen = select_tests(preset, tests)
    interval = int(sweep.get("write_interval", 5))
    points, skipped = [], []
    for c in class_list:
        for r in rank_list:
            base = BtPoint("none", "no I/O (T_C)", c, r)
            if r > _GRID[c]:
                skipped.append((base, f"class {c} has {_GRID[c]} planes: at most {_GRID[c]} ranks"))
                continue
            points.append(base)
            for t in chosen:
                points.append(BtPoint(t["id"], t.get("title", t["id"]), c, r, io=t["io"],
                                      interval=interval, overlap=bool(t.get("overlap", False))))
    if not points:
        raise UsageError("the plan has no runnable point: check --ranks and --classes")
    return points, skipped


def _results(store, run_id):
    out = []
    for p in store.points(run_id):
        if p["status"] == "ok" and p["result_json"]:
            out.append(json.loads(p["result_json"]))
    return out


def format_tables(store, run_id):
    """One table per class: ranks x (T_C, then T_T / R_IO / zeta per mode)."""
    rows = _results(store, run_id)
    lines = []
    for cls in sorted({d["params"]["class"] for d in rows}, key="SWABC".index):
        mine = [d for d in rows if d["params"]["class"] == cls]
        n = mine[0]["params"]["grid"]
        modes = []
        for d in mine:
            key = _mode_key(d)
            if key != "none" and key not in modes:
                modes.append(key)
        lines.append(f"\nBT class {cls} (N={n}), I_W={_interval(mine)}: seconds, R_IO in MB/s (1e6 bytes)")
        head = f"{'ranks':>5} {'T_C':>9}" + "".join(f" | {m:^29}" for m in modes)
        lines.append(head)
        lines.append(f"{'':>5} {'':>9}" + "".join(f" | {'T_T':>9} {'R_IO':>9} {'zeta':>9}" for _ in modes))
        for r in sorted({d["params"]["ranks"] for d in mine}):
            at = {(_mode_key(d)): d for d in mine if d["params"]["ranks"] == r}
            tc = at.get("none")
            cells = f"{r:>5} {tc['t_t_seconds'] if tc else float('nan'):>9.3f}"
            for m in modes:
                d = at.get(m)
                if d is None:
                    cells += f" | {'-':>9} {'-':>9} {'-':>9}"
                    continue
                zeta = d.get("zeta")
                cells += (f" | {d['t_t_seconds']:>9.3f} {d['io']['r_io_bytes_per_s'] / 1e6:>9.1f} "
                          f"{zeta if zeta is not None else float('nan'):>9.4f}")
            lines.append(cells)
        if any((d.get("zeta") or 0) < 0 for d in mine):
            lines.append("  note: a negative zeta means T_T fell inside the noise of T_C: the run is "
                         "too short to show its I/O cost; use a larger class (A, B)")
    return "\n".join(lines)


def _mode_key(d):
    key = d["params"]["io"]
    return key + ("+overlap" if d["params"].get("overlap") else "") if key != "none" else "none"


def _interval(docs):
    return max((d["params"].get("write_interval") or 0) for d in docs) or "-"


def plot_figures(store, run_id, out_dir):
    """Per class: T_C and T_T vs ranks, R_IO vs ranks, zeta vs ranks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _results(store, run_id)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for cls in sorted({d["params"]["class"] for d in rows}, key="SWABC".index):
        mine = [d for d in rows if d["params"]["class"] == cls]
        series = {}
        for d in mine:
            series.setdefault(_mode_key(d), []).append(d)
        ranks = sorted({d["params"]["ranks"] for d in mine})
        for name, ylabel, value, with_tc in (
                ("time", "seconds", lambda d: d["t_t_seconds"], True),
                ("rio", "R_IO (MB/s)", lambda d: d["io"]["r_io_bytes_per_s"] / 1e6, False),
                ("zeta", "zeta = T_T/T_C - 1", lambda d: d.get("zeta"), False)):
            f, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
            for key, docs in series.items():
                if key == "none" and not with_tc:
                    continue
                docs = sorted(docs, key=lambda d: d["params"]["ranks"])
                pts = [(d["params"]["ranks"], value(d)) for d in docs if value(d) is not None]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label="T_C (no I/O)" if key == "none" else f"T_T {key}")
            ax.set_xscale("log", base=2)
            ax.set_xticks(ranks)
            ax.set_xticklabels([str(r) for r in ranks])
            ax.set_xlabel("ranks")
            ax.set_ylabel(ylabel)
            ax.set_title(f"BT class {cls}: {ylabel}")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
            f.tight_layout()
            path = out_dir / f"run{run_id}-bt{cls}-{name}.png"
            f.savefig(path)
            plt.close(f)
            paths.append(path)
    return paths
