"""Kind `laplace`: the SGI 750 report's Figure 8: a Jacobi solve on an N×N
grid in row blocks (8001² in the report), checkpointed with
MPI_File_write_all after each rank's view, with and without collective
buffering.  romio_cb_write is a ROMIO hint, so the points run on ROMIO
(`--mpiio-impl romio`: under Open MPI the engine picks its ROMIO before
the first file, nothing to export) unless a test says mpiio_impl =
"ompio"; each record keeps the implementation that ran and how many ranks
issued write calls, so a hint that did nothing shows."""

from .. import schema
from ..figures import Figure, Param, Record
from ..units import format_value
from . import SizeSetting
from .kernel import COMMON_PARAMS, RATE, KernelKind, KernelPoint


ON_OFF = {"enable": "on", "disable": "off"}


class LaplaceKind(KernelKind):
    name = "laplace"
    size_setting = SizeSetting("--grid", "grid")
    description = "2-D Laplace solver checkpoint: MPI_File_write_all, collective buffering on/off"
    own_test_keys = {"grid": schema.POSITIVE, "iterations": schema.POSITIVE,
                     "cb": schema.one_of("enable", "disable", "automatic"), "checkpoint_every": schema.POSITIVE,
                     "mpiio_impl": schema.one_of("romio", "ompio")}
    params = {**COMMON_PARAMS, "cb": Param("collective buffering"), "grid": Param("grid"),
              "writers": Param("ranks writing"), "mpiio_impl": Param("MPI-IO")}
    quantities = {"rate": RATE}

    def measure_name(self, record):
        cb = record.params.get("cb")
        return f"checkpoint, cb {ON_OFF.get(cb, cb)}"

    def points(self, test, ranks, trials):
        grid = int(test.get("grid", 8001))
        args = ["laplace", "--grid", str(grid), "--iterations", str(test.get("iterations", 100)),
                "--cb", test.get("cb", "automatic"), "--mpiio-impl", test.get("mpiio_impl", "romio")]
        if "checkpoint_every" in test:
            args += ["--checkpoint-every", str(test["checkpoint_every"])]
        settings = {"grid": grid, "cb": test.get("cb", "automatic"), "figure": test.get("figure", "")}
        points, skipped = [], []
        for r in ranks:
            for trial in range(1, trials + 1):
                p = KernelPoint(self.name, test["id"], test.get("title", test["id"]), r, args, settings, trial,
                                lambda res: f"checkpoint {format_value(res['best_mib_per_s'])} MiB/s")
                if r > grid:
                    if trial == 1:
                        skipped.append((p, f"a {grid}x{grid} grid does not split over {r} ranks"))
                    continue
                points.append(p)
        return points, skipped

    def records(self, point, result):
        if not result["verification"]["ok"]:
            return []
        p = result["params"]
        writers = sum(1 for r in result["last_write_per_rank"] if r["write_syscalls"] > 0)
        return [Record({"study": self.name, "test": point["params"]["test"], "ranks": p["ranks"],
                        "grid": p["grid"], "cb": p["cb"], "writers": writers,
                        "mpiio_impl": p["mpi_io_implementation"],
                        "trial": point["params"].get("trial", 1)},
                       {"rate": [c["mib_per_s"] for c in result["checkpoints"]]})]

    def figures(self, preset, records, options):
        return [Figure(id="laplace", number="Figure 8",
                       title="Laplace solver checkpoint ({grid}x{grid} grid): MPI_File_write_all",
                       x="ranks", series="cb", y="rate", where={"study": self.name}, spread=True)]

    def notes(self, preset, records, options):
        by_cb = {}
        for r in records:
            if r.params["ranks"] > 1:
                by_cb.setdefault(r.params["cb"], set()).add(r.params["writers"])
        if "enable" in by_cb and "disable" in by_cb and by_cb["enable"] == by_cb["disable"]:
            return ["collective buffering on and off had the same ranks writing: the MPI-IO in use "
                    "ignored romio_cb_write (give the test mpiio_impl = \"romio\")"]
        return []


KIND = LaplaceKind()
