"""Kind `bonnie`: the SGI 750 report's single-node view (its Figures 1 and
2): Bray's bonnie with 8 KiB chunks and the report's "bigbonnie" with
64 KiB chunks, on a file of twice the node's memory (or a smaller one with
eviction, the engine says which), shown in bonnie's own table shape."""

from .. import schema
from ..figures import Param, Quantity, Record, size_param
from ..units import format_value, parse_size
from . import SizeSetting
from .kernel import COMMON_PARAMS, RATE, KernelKind, KernelPoint

ORDER = ("putc", "block_write", "rewrite", "getc", "block_read", "seeks")
HEADS = ("Per Char", "Block", "Rewrite", "Per Char", "Block", "Seeks")


def _cache_note(record):
    """What the heading may say of the page cache: evicted before reads,
    except on a file system in memory (tmpfs), where nothing can be."""
    if record.get("memory_backed"):
        return " (tmpfs: every byte in memory, nothing evicted)"
    return " (evicted before reads)" if record.get("evict") else ""


def _memory_backed(params):
    """A bonnie result has no `target`: its params say the file system
    (the engine's memory_backed; results from before it, the type)."""
    if "memory_backed" in params:
        return bool(params["memory_backed"])
    return params.get("fs_type") in ("tmpfs", "ramfs")


class BonnieKind(KernelKind):
    name = "bonnie"
    size_setting = SizeSetting("--size", "size")
    description = "bonnie/bigbonnie: per-character, block, rewrite and seek rates with %CPU, one node"
    own_test_keys = {"chunk": schema.SIZE, "size": schema.SIZE, "evict": schema.BOOL, "seeks": schema.POSITIVE}
    params = {**COMMON_PARAMS, "chunk": size_param("chunk"), "size": size_param("file"),
              "measure": Param("test", lambda m: m.replace("_", " "))}
    quantities = {"rate": RATE, "seeks": Quantity("seeks", "/s", "max", ".1f"),
                  "cpu": Quantity("%CPU", "%", "max", ".1f")}
    # each row is one of bonnie's tests: putc, block write, ..., seeks
    measure_keys = ("measure",)
    facts = ("figure", "evict", "memory_backed")
    compared = {"rate": "", "seeks": ""}

    def unused_options(self, preset, options):
        if options.get("ranks"):
            return {"--ranks": "bonnie runs one process on one node, as Bray's bonnie did"}
        return {}

    def check(self, preset, path):
        super().check(preset, path)
        self._one_process(preset.get("sweep", {}), path, "sweep.")

    def check_test(self, test, path, where):
        super().check_test(test, path, where)
        self._one_process(test, path, where)

    @staticmethod
    def _one_process(table, path, where):
        """A file's ranks above 1 were run at one rank without a word, where
        --ranks is refused (tester 19)."""
        if any(r != 1 for r in table.get("ranks", [1])):
            raise schema.PresetError(path, f"{where}ranks", "bonnie runs one process on one node, as Bray's "
                                                            "bonnie did: give ranks = [1], or leave it out")

    def points(self, test, ranks, trials):
        args = ["bonnie", "--chunk", str(test.get("chunk", "8k"))]
        settings = {"chunk": parse_size(test.get("chunk", "8k")), "figure": test.get("figure", "")}
        if "size" in test:
            args += ["--size", str(test["size"])]
        if test.get("evict"):
            args.append("--evict")
        if "seeks" in test:
            args += ["--seeks", str(test["seeks"])]
        return [KernelPoint(self.name, test["id"], test.get("title", test["id"]), 1, args, settings, trial,
                            lambda r: f"block write {format_value(r['tests'][2]['mib_per_s'])} MiB/s")
                for trial in range(1, trials + 1)], []

    def records(self, point, result):
        if not result["verification"]["ok"]:
            return []
        p = point["params"]
        base = {"study": self.name, "test": p["test"], "ranks": 1, "chunk": result["params"]["chunk_bytes"],
                "size": result["params"]["size_bytes"], "figure": p.get("figure", ""),
                "evict": result["params"]["evict"], "trial": p.get("trial", 1),
                "memory_backed": _memory_backed(result["params"])}
        out = []
        for t in result["tests"]:
            values = {"cpu": [t["cpu_percent"]]}
            if t["name"] == "seeks":
                values["seeks"] = [t["seeks_per_s"]]
            else:
                values["rate"] = [t["mib_per_s"]]
            out.append(Record({**base, "measure": t["name"]}, values))
        return out

    def tables(self, preset, records, options):
        """bonnie's table, one per test: K/sec below 64 KiB chunks (the
        report's Figure 1), MB/s from 64 KiB (Figure 2); best of the rounds."""
        out = []
        for test in dict.fromkeys(r.params["test"] for r in records):
            mine = [r for r in records if r.params["test"] == test]
            first = mine[0].params
            kilo = first["chunk"] < 65536
            unit = "K/sec" if kilo else "MB/s"
            scale = 1024.0 if kilo else 1.0   # records keep MiB/s
            best = {}
            for r in mine:
                m = r.params["measure"]
                key = "seeks" if m == "seeks" else "rate"
                v = max(r.values[key])
                if m not in best or v > best[m][0]:
                    best[m] = (v, max(r.values["cpu"]))
            number = f"{first['figure']}. " if first.get("figure") else ""
            lines = [f"\n{number}bonnie, chunk {first['chunk'] // 1024} KiB, file {first['size'] >> 20} MB"
                     f"{_cache_note(first)}: {unit} and %CPU, best of "
                     f"{len(mine) // len(ORDER)}",
                     "        ---------Sequential Output-------- ---Sequential Input-- ----Random----",
                     "     MB " + " ".join(f"{h:>14}" for h in HEADS),
                     f"{first['size'] >> 20:>7} " + " ".join(
                         f"{best[m][0] * (1 if m == 'seeks' else scale):>8.{0 if kilo and m != 'seeks' else 1}f} "
                         f"{best[m][1]:>5.1f}"
                         if m in best else f"{'-':>14}" for m in ORDER)]
            out.append("\n".join(lines))
        return out


KIND = BonnieKind()
