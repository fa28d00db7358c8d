"""Kind `beff`: b_eff_io, the benchmark the SGI 750 report names as next:
five pattern types over its chunk sizes, first write, rewrite and read
within a time limit, and the single number (scatter counted twice, then
the mean of the three access methods).  The chunk list, the time shares
and the rule are the published description, unverified against its
source (REFERENCE-FACTS 5)."""

from .. import schema
from ..figures import Figure, Param, Record
from .kernel import COMMON_PARAMS, RATE, KernelKind, KernelPoint


class BeffKind(KernelKind):
    name = "beff"
    description = "b_eff_io: five patterns, chunk sizes 1k..MPART, write/rewrite/read, one number"
    own_test_keys = {"time": schema.POSITIVE, "max_chunk": schema.SIZE, "no_shared": schema.BOOL}
    params = {**COMMON_PARAMS, "method": Param("access"), "pattern": Param("pattern")}
    quantities = {"rate": RATE}

    def points(self, test, ranks, trials):
        args = ["beff", "-T", str(test.get("time", 60))]
        if "max_chunk" in test:
            args += ["--max-chunk", str(test["max_chunk"])]
        if test.get("no_shared"):
            args.append("--no-shared")
        settings = {"figure": test.get("figure", "")}
        return [KernelPoint(self.name, test["id"], test.get("title", test["id"]), r, args, settings, trial,
                            lambda res: f"b_eff_io {res['b_eff_io_mib_per_s']:.1f} MiB/s")
                for r in ranks for trial in range(1, trials + 1)], []

    def records(self, point, result):
        if not result["verification"]["ok"]:
            return []
        base = {"study": self.name, "test": point["params"]["test"], "ranks": result["params"]["ranks"],
                "trial": point["params"].get("trial", 1)}
        out = [Record({**base, "method": "b_eff_io", "pattern": "weighted"}, {"rate": [result["b_eff_io_mib_per_s"]]})]
        for m in result["methods"]:
            out.append(Record({**base, "method": m["name"], "pattern": "weighted"}, {"rate": [m["mib_per_s"]]}))
            out += [Record({**base, "method": m["name"], "pattern": p["name"]}, {"rate": [p["mib_per_s"]]})
                    for p in m["patterns"]]
        return out

    def figures(self, preset, records, options):
        return [Figure(id="beff", title="b_eff_io and its access methods (scatter counted twice)",
                       x="ranks", series="method", y="rate", where={"study": self.name, "pattern": "weighted"},
                       spread=True),
                Figure(id="beff-patterns", title="b_eff_io by pattern type, first write", x="ranks",
                       series="pattern", y="rate", where={"study": self.name, "method": "write"})]


KIND = BeffKind()
