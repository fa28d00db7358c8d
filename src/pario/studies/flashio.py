"""Kind `flashio`: the FLASH I/O benchmark of the SGI 750 report's
Figure 7: a checkpoint and two plotfiles through parallel HDF5, 80 + rank
mod 3 blocks of 8³ zones per rank, independent or collective transfer;
the bandwidth is the PnetCDF port's (all bytes over the sum of the three
files' times, each the slowest rank's)."""

from .. import schema
from ..figures import Figure, Param, Quantity, Record
from ..units import format_value
from . import SizeSetting
from .kernel import COMMON_PARAMS, RATE, KernelKind, KernelPoint


class FlashioKind(KernelKind):
    name = "flashio"
    size_setting = SizeSetting("--blocks", "blocks")
    description = "FLASH-IO: checkpoint and plotfiles through parallel HDF5, independent or collective"
    own_test_keys = {"transfer": schema.one_of("independent", "collective"), "blocks": schema.POSITIVE,
                     "nxb": schema.POSITIVE}
    params = {**COMMON_PARAMS, "transfer": Param("HDF5 transfer"), "file": Param("file")}
    quantities = {"rate": RATE, "seconds": Quantity("time", "s", "min", ".3f")}
    measure_keys = ("file",)   # "all three" (the benchmark's figure) or one file

    def points(self, test, ranks, trials):
        transfer = test.get("transfer", "independent")
        args = ["flashio", "--transfer", transfer, "--blocks", str(test.get("blocks", 80)),
                "--nxb", str(test.get("nxb", 8))]
        settings = {"transfer": transfer, "figure": test.get("figure", "")}
        return [KernelPoint(self.name, test["id"], test.get("title", test["id"]), r, args, settings, trial,
                            lambda res: f"{format_value(res['mib_per_s'])} MiB/s")
                for r in ranks for trial in range(1, trials + 1)], []

    def records(self, point, result):
        if not result["verification"]["ok"]:
            return []
        p = result["params"]
        base = {"study": self.name, "test": point["params"]["test"], "ranks": p["ranks"],
                "transfer": p["transfer"], "trial": point["params"].get("trial", 1)}
        out = [Record({**base, "file": "all three"}, {"rate": [result["mib_per_s"]],
                                                      "seconds": [result["total_seconds"]]})]
        out += [Record({**base, "file": f["name"]}, {"rate": [f["mib_per_s"]], "seconds": [f["seconds"]]})
                for f in result["files"]]
        return out

    def timed_seconds(self, record, result):
        """The bandwidth of all three files sums three timed phases: each
        file's own time, of which the plotfiles' may be milliseconds."""
        if record.params.get("file") == "all three":
            return [f["seconds"] for f in result["files"]]
        return super().timed_seconds(record, result)

    def figures(self, preset, records, options):
        return [Figure(id="flashio", number="Figure 7", title="FLASH I/O through parallel HDF5: bandwidth",
                       x="ranks", series="transfer", y="rate", where={"study": self.name, "file": "all three"},
                       spread=True),
                Figure(id="flashio-files", title="FLASH I/O: time per file (slowest rank)", x="ranks",
                       series=("transfer", "file"), y="seconds",
                       where={"study": self.name, "file": ["checkpoint", "plot_centers", "plot_corners"]})]


KIND = FlashioKind()
