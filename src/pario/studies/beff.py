"""Kind `beff`: b_eff_io, the benchmark the SGI 750 report names as next:
five pattern types over its chunk sizes, first write, rewrite and read
within a time limit, and the single number (scatter counted twice, then
the mean of the three access methods).  The chunk list, the time shares
and the rule are the published description, unverified against its
source (REFERENCE-FACTS 5)."""

from .. import schema
from ..figures import Figure, Param, Record
from ..units import format_size, format_value
from . import SizeSetting
from .kernel import COMMON_PARAMS, RATE, KernelKind, KernelPoint


def chunk_label(n):
    """1032 -> '1 KiB+8': b_eff_io's non-wellformed chunks are 8 bytes over."""
    return f"{format_size(n - 8)}+8" if n % 1024 == 8 else format_size(n)


class BeffKind(KernelKind):
    name = "beff"
    size_setting = SizeSetting("-T", "time")
    description = "b_eff_io: five patterns, chunk sizes 1k..MPART, write/rewrite/read, one number"
    own_test_keys = {"time": schema.POSITIVE, "max_chunk": schema.SIZE, "no_shared": schema.BOOL}
    params = {**COMMON_PARAMS, "method": Param("access"), "pattern": Param("pattern"),
              "chunk": Param("chunk", chunk_label, "log2", unit="bytes")}
    quantities = {"rate": RATE}

    def measure_name(self, record):
        """'b_eff_io', 'write, all patterns' (the weighted mean of an access
        method), 'read, pattern scatter' or 'read, pattern scatter, chunk 1 KiB+8'."""
        method, pattern, chunk = (record.params.get(k) for k in ("method", "pattern", "chunk"))
        if method == "b_eff_io":
            return method
        name = f"{method}, {'all patterns' if pattern == 'weighted' else 'pattern ' + pattern}"
        return f"{name}, chunk {chunk_label(chunk)}" if chunk else name

    def points(self, test, ranks, trials):
        args = ["beff", "-T", str(test.get("time", 60))]
        if "max_chunk" in test:
            args += ["--max-chunk", str(test["max_chunk"])]
        if test.get("no_shared"):
            args.append("--no-shared")
        settings = {"figure": test.get("figure", "")}
        return [KernelPoint(self.name, test["id"], test.get("title", test["id"]), r, args, settings, trial,
                            lambda res: f"b_eff_io {format_value(res['b_eff_io_mib_per_s'])} MiB/s")
                for r in ranks for trial in range(1, trials + 1)], []

    def records(self, point, result):
        if not result["verification"]["ok"]:
            return []
        base = {"study": self.name, "test": point["params"]["test"], "ranks": result["params"]["ranks"],
                "trial": point["params"].get("trial", 1)}
        ranks = result["params"]["ranks"]
        out = [Record({**base, "method": "b_eff_io", "pattern": "weighted"}, {"rate": [result["b_eff_io_mib_per_s"]]})]
        for m in result["methods"]:
            out.append(Record({**base, "method": m["name"], "pattern": "weighted"}, {"rate": [m["mib_per_s"]]}))
            for p in m["patterns"]:
                out.append(Record({**base, "method": m["name"], "pattern": p["name"]}, {"rate": [p["mib_per_s"]]}))
                # each chunk size: the bytes the engine counts for it (every rank,
                # every call) over its loop's time (the slowest rank; no open/close)
                out += [Record({**base, "method": m["name"], "pattern": p["name"], "chunk": c["chunk_bytes"]},
                               {"rate": [ranks * c["calls_per_rank"] * c["chunk_bytes"] / 1048576 / c["seconds"]]})
                        for c in p.get("chunks", []) if c["calls_per_rank"] > 0 and c["seconds"] > 0]
        return out

    def figures(self, preset, records, options):
        return [Figure(id="beff", title="b_eff_io and its access methods (scatter counted twice)",
                       x="ranks", series="method", y="rate",
                       where={"study": self.name, "pattern": "weighted", "chunk": None}, spread=True),
                Figure(id="beff-patterns", title="b_eff_io by pattern type, first write", x="ranks",
                       series="pattern", y="rate", where={"study": self.name, "method": "write", "chunk": None})]


KIND = BeffKind()
