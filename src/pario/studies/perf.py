"""Kind `perf`: ROMIO perf, the MPI-IO upper bound of the SGI 750 report's
Figures 3 to 5: every rank writes and reads its array at rank × size,
with and without MPI_File_sync in the timed write, best of 5; swept over
array size and rank count.  Sizes whose arrays would not fit twice in
half the node's memory are left out (said before the run)."""

from .. import schema
from ..figures import Figure, Param, Record, size_param
from ..units import format_size, format_value, parse_size
from . import SizeSetting
from .kernel import COMMON_PARAMS, RATE, KernelKind, KernelPoint, node_memory

OPS = {(False, "write"): "write, no sync", (False, "read"): "read, no sync",
       (True, "write"): "write with sync", (True, "read"): "read after sync"}
# What each operation's rates are, for its figure's heading: perf evicts
# nothing, so its reads come back from the page cache on any file system
# (tester 19: 109 GB/s "read" from a disk, without a word).
OP_NOTES = {"write, no sync": "no sync: rates into the page cache",
            "write with sync": "MPI_File_sync in the timed write: rates to storage",
            "read, no sync": "read back from the page cache: perf reads what it just wrote",
            "read after sync": "read back from the page cache: the sync evicts nothing"}
# How a row of `pario compare` names each operation.
SHORT = {"write, no sync": "write", "read, no sync": "read", "write with sync": "write+sync",
         "read after sync": "read after sync"}


class PerfKind(KernelKind):
    name = "perf"
    size_setting = SizeSetting("--size", "sizes")
    description = "ROMIO perf: MPI_File_write/read of each rank's array at rank x size, with/without sync"
    own_test_keys = {"sizes": schema.SIZES, "repeats": schema.POSITIVE}
    required_own = ("sizes",)
    params = {**COMMON_PARAMS, "size": size_param("array size"),
              "op": Param("operation", lambda op: SHORT.get(op, op))}
    quantities = {"rate": RATE}
    measure_keys = ("op",)

    def points(self, test, ranks, trials):
        points, skipped = [], []
        memory = node_memory()
        for r in ranks:
            for s in test["sizes"]:
                size = parse_size(s)
                settings = {"size": size, "figure": test.get("figure", "")}
                args = ["perf", "--size", str(s), "--repeats", str(test.get("repeats", 5))]
                for trial in range(1, trials + 1):
                    p = KernelPoint(self.name, test["id"], test.get("title", test["id"]), r, args, settings, trial,
                                    lambda res: f"write {format_value(res['passes'][0]['write_mib_per_s'])} MiB/s",
                                    writes=size * r)  # one file, each rank's array at rank x size
                    if memory and 2 * size * r > memory // 2:
                        if trial == 1:
                            skipped.append((p, f"{r} arrays of {format_size(size)}, twice, exceed half "
                                               "the node's memory"))
                        continue
                    points.append(p)
        return points, skipped

    def records(self, point, result):
        if not result["verification"]["ok"]:
            return []
        p = point["params"]
        base = {"study": self.name, "test": p["test"], "ranks": result["params"]["ranks"],
                "size": result["params"]["size_per_rank_bytes"], "trial": p.get("trial", 1)}
        out = []
        for x in result["passes"]:
            for what in ("write", "read"):
                # the best repeat's time too: what the short-phase diagnosis weighs
                out.append(Record({**base, "op": OPS[(x["sync"], what)]},
                                  {"rate": [x[f"{what}_mib_per_s"]], "seconds": [x.get(f"best_{what}_seconds")]}))
        return out

    def heading_note(self, records):
        ops = {r.params.get("op") for r in records}
        return OP_NOTES.get(ops.pop(), "") if len(ops) == 1 else ""

    def figures(self, preset, records, options):
        return [Figure(id=f"perf-{key}", number=number, title=f"perf {op}: aggregate bandwidth",
                       x="ranks", series="size", y="rate", where={"study": self.name, "op": op}, spread=True,
                       note=OP_NOTES[op])
                for key, number, op in (("read-sync", "Figure 3", "read after sync"),
                                        ("write-sync", "Figure 4", "write with sync"),
                                        ("write-nosync", "Figure 5", "write, no sync"),
                                        ("read-nosync", "", "read, no sync"))]


KIND = PerfKind()
