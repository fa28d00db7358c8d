"""Kind `btio`: the SGI 750 report's Figure 6, NAS btio as NPB runs it: BT
on NPB's own multi-partition (square rank counts only; others are left
out, said before the run), checkpointing with one of BTIO's subtypes
(`full`: one collective write per dump through a derived-datatype view, as
in the report; `simple`, `fortran`, `epio`), the file verified after.  The
figure is NPB's own I/O data rate over processes, one curve per class; the
table is NPB's "BTIO -- statistics" block beside T_T and R_IO (the NHT-1
study, kind `bt`, adds T_C and zeta)."""

from math import isqrt

from .. import schema
from ..figures import Figure, Param, Quantity, Record
from .bt import (CLASSES_OPTION, GRID, NPB_IO_HEAD, NPB_IO_NOTE, NPB_IO_QUANTITIES, check_classes, classes_problem,
                 npb_io_row, npb_io_values, r_io)
from . import SizeSetting
from .kernel import COMMON_PARAMS, KernelKind, KernelPoint

SUBTYPES = ("full", "simple", "fortran", "epio")


def _smallest_cell(grid, ranks):
    return grid // isqrt(ranks)


class BtioKind(KernelKind):
    name = "btio"
    size_setting = SizeSetting("--class", "classes", "--classes")
    description = "NAS BTIO on NPB's multi-partition: full/simple/fortran/epio, NPB's I/O rate"
    own_test_keys = {"subtype": schema.one_of(*SUBTYPES),
                     "classes": schema.Type("list of classes", classes_problem)}
    required_own = ("classes",)
    options = (*KernelKind.options, CLASSES_OPTION)

    def plan_tests(self, preset, tests, options):
        """--classes replaces every test's own classes."""
        if options.get("classes"):
            classes = check_classes(options["classes"])
            tests = [{**t, "classes": classes, "quick": {k: v for k, v in t.get("quick", {}).items()
                                                         if k != "classes"}} for t in tests]
        return super().plan_tests(preset, tests, options)
    params = {**COMMON_PARAMS, "class": Param("class"), "subtype": Param("subtype"), "N": Param("N")}
    facts = ("steps", "interval")
    quantities = {"t_t": Quantity("time", "s", "min", ".4g"),
                  **NPB_IO_QUANTITIES}
    compared = {"npb_mbps": "NPB I/O rate", "t_t": "T_T"}

    def points(self, test, ranks, trials):
        subtype = test.get("subtype", "full")
        points, skipped = [], []
        for c in (c.upper() for c in test["classes"]):
            args = ["bt", "--class", c, "--io", subtype, "--decomposition", "multipartition"]
            settings = {"class": c, "subtype": subtype, "figure": test.get("figure", "")}
            for r in ranks:
                for trial in range(1, trials + 1):
                    p = KernelPoint(self.name, test["id"], test.get("title", test["id"]), r, args,
                                    settings, trial,
                                    lambda res: f"NPB I/O {res['io']['npb_io_mb_per_s']:.2f} MB/s",
                                    expected_warnings=("no --tc given",))  # btio has no zeta (kind bt has)
                    why = None
                    if isqrt(r) ** 2 != r:
                        why = f"multi-partition needs a square rank count, not {r}"
                    elif _smallest_cell(GRID[c], r) < 3:
                        why = f"class {c} on {r} ranks gives cells under NPB's 3 points"
                    if why:
                        if trial == 1:
                            skipped.append((p, why))
                        continue
                    points.append(p)
        return points, skipped

    def records(self, point, result):
        v = result["verification"]
        if not (v["ok"] and v.get("file_ok")):
            return []   # an unverified run (solution or file) is no trial
        p = result["params"]
        return [Record({"study": self.name, "test": point["params"]["test"], "ranks": p["ranks"],
                        "class": p["class"], "N": p["grid"], "steps": p["steps"],
                        "interval": p["write_interval"], "subtype": point["params"]["subtype"],
                        "trial": point["params"].get("trial", 1)},
                       {"t_t": [result["t_t_seconds"]], **npb_io_values(result)})]

    def figures(self, preset, records, options):
        return [Figure(id=f"btio-{s}", number="Figure 6",
                       title=f"NAS btio ({s}) on NPB's multi-partition: I/O data rate as NPB prints it",
                       x="ranks", series="class", y="npb_mbps", where={"study": self.name, "subtype": s},
                       spread=True)
                for s in SUBTYPES if any(r.params["subtype"] == s for r in records)]

    def tables(self, preset, records, options):
        rows = {}
        for r in records:
            rows.setdefault((r.params["subtype"], r.params["class"], r.params["ranks"]), []).append(r)
        # NPB's rate divides by the I/O time alone: the run of least T_T
        # need not be the run of the best rate, which Figure 6 draws
        lines = ["\nNAS btio on NPB's multi-partition: NPB's statistics of the run with the least T_T "
                 "(Figure 6 draws each point's best I/O rate of its runs)",
                 f"{'subtype':>8} {'class':>5} {'N':>4} {'procs':>5} {'T_T (secs)':>11} "
                 f"{'R_IO (bytes/sec)':>17}   {NPB_IO_HEAD}"]
        for (sub, cls, ranks) in sorted(rows, key=lambda k: (k[0], "SWABC".index(k[1]), k[2])):
            best = min(rows[(sub, cls, ranks)], key=lambda r: r.values["t_t"][0])
            p, tt = best.params, best.values["t_t"][0]
            lines.append(f"{sub:>8} {cls:>5} {p['N']:>4} {ranks:>5} {tt:>11.4g} "
                         f"{r_io(p['N'], p['steps'], p['interval'], tt):>17.0f}   {npb_io_row(best.values)}")
        lines.append(f"  {NPB_IO_NOTE}; R_IO = 5 w N^3 N_S / (I_W T_T) as NHT-1 defines it")
        return ["\n".join(lines)]


KIND = BtioKind()
