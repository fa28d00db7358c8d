"""The model's figures beside the reports' claims, as the markdown tables of
the README (the CFS claims) and docs/model.md (the ASCI Red shapes), and the ASCI Red report's Tables 2 and 3 as the model fills
them (the report withholds its values).

The CFS rows are the points of the cfs preset as `pario model cfs
--machine ipsc860 --tests T --ranks N --blocks B` predicts them (write,
then read what was written, for the partitioned tests), one
function (pario.model.command.predict_preset) for both.

    .venv/bin/python bench/model_claims.py > /tmp/claims.md
"""

import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from pario.model import load_machine, predict_point  # noqa: E402
from pario.model.command import predict_preset  # noqa: E402
from pario.studies.io import IoPoint  # noqa: E402

MIB = 1 << 20


def rate(machine, layout, phase, ranks, block=MIB, size=128 * MIB, sets=(), **kw):
    """A point of the model's own making (the ASCI Red shapes, whose
    report gives request sizes and file layouts no preset runs)."""
    p = IoPoint("t", "t", layout, [phase], ranks, block, size, iterations=1, **kw)
    doc = predict_point(p, load_machine(machine, list(sets)))
    ph = doc["phases"][0]
    return ph["summary"]["best_mib_per_s"], ph["explanation"]["bound"]


def cfs(test, phase, ranks, block="1m", sets=(), group_unit=None):
    """The figure `pario model cfs --machine ipsc860 --tests TEST --ranks
    RANKS --blocks BLOCK [--group-unit U] [--set ...]` prints for PHASE:
    the preset's own point (a partitioned point writes, then reads what it
    wrote), so the docs' table is what a reader running that command gets."""
    ph = next(p for p in _cfs_point(test, ranks, block, sets, group_unit)["phases"] if p["name"] == phase)
    return ph["summary"]["best_mib_per_s"], ph["explanation"]["bound"]


@functools.lru_cache(maxsize=None)
def _cfs_point(test, ranks, block, sets, group_unit):
    """One point's document, its write and read phases both (computed once)."""
    options = {"tests": [test], "ranks": [str(ranks)], "blocks": [block]}
    if group_unit:
        options["group_unit"] = group_unit
    (_, doc), = predict_preset("cfs", load_machine("ipsc860", list(sets)), **options)
    return doc


def cfs_rows():
    x5 = ("io_node.cache=5000k",)
    rows = [
        ("broadcast read peaks at about 14 MB/s (fit: io_node.request_overhead)", "154",
         "14", [cfs("broadcast", "read", n) for n in (1, 8, 64, 128)], "1, 8, 64, 128"),
        ("partitioned write: 2 MB/s on 1 node", "180", "2", [cfs("partitioned", "write", 1)], "1"),
        ("partitioned write: 6-7 MB/s on 16 nodes", "180", "6-7", [cfs("partitioned", "write", 16)], "16"),
        ("partitioned write: level (slight drop) through 128", "180", "6-7",
         [cfs("partitioned", "write", n) for n in (32, 64, 128)], "32, 64, 128"),
        ("partitioned read: 2 MB/s on 1 node", "182", "2", [cfs("partitioned", "read", 1)], "1"),
        ("partitioned read: 8 MB/s on 16 nodes", "182", "8", [cfs("partitioned", "read", 16)], "16"),
        ("partitioned read: below 1 MB/s on 64 and 128", "182", "< 1",
         [cfs("partitioned", "read", n) for n in (64, 128)], "64, 128"),
        ("grouped (G=16) partitioned read: 7 MB/s on 128 (1 MB calls)", "266", "7",
         [cfs("partitioned-g16", "read", 128)], "128"),
        ("grouped (G=16), 4 KB calls, token per call", "264-266", "7",
         [cfs("partitioned-g16", "read", 128, block="4k")], "128"),
        ("grouped (G=16), 4 KB calls, token per rank's share (--group-unit rank)", "264-266", "7",
         [cfs("partitioned-g16", "read", 128, block="4k", group_unit="rank")], "128"),
        ("5x the cache (5 MB) should nearly eliminate the drop (--set io_node.cache=5000k)", "318", "~8",
         [cfs("partitioned", "read", n, sets=x5) for n in (64, 128)], "64, 128"),
    ]
    print("| claim | report line | report (MB/s) | model (MiB/s) at ranks | bound |")
    print("| --- | --- | --- | --- | --- |")
    for claim, line, said, results, ranks in rows:
        figs = ", ".join(f"{r:.2f}" for r, _ in results)
        bounds = ", ".join(dict.fromkeys(b for _, b in results))
        print(f"| {claim} | {line} | {said} | {figs} ({ranks}) | {bounds} |")


def red_rows():
    nighten = ("stripe.count=4", "io_node.count=2")
    print("\n| ASCI Red shape | report lines | model |")
    print("| --- | --- | --- |")
    scaled = [rate("asci-red", "partitioned", "read", 1, block=b << 10, size=64 * MIB,
                   sets=("stripe.count=2",))[0] / 2 for b in (64, 256, 1024, 4096)]
    print("| scaled (per-RAID) single-node read falls for small requests (2-way PFS) | 440-453 | "
          + ", ".join(f"{s:.1f}" for s in scaled) + " MiB/s at 64k, 256k, 1m, 4m |")
    for api, what in (("posix", "synchronous read()"), ("aio", "asynchronous cread()")):
        vals = [rate("asci-red", "partitioned", "read", 64, size=64 * 16 * MIB, files="per-rank",
                     api=api, sets=nighten + (f"agent.count={f}",))[0] / 4 for f in (1, 2, 4, 8, 16)]
        print(f"| 64 nodes, 1 MB requests, {what}, scaled, over 1, 2, 4, 8, 16 fyods | 564-588 | "
              + ", ".join(f"{v:.1f}" for v in vals) + " MiB/s |")
    total = rate("asci-red", "partitioned", "write", 512, block=2 * MIB, size=512 * 16 * MIB,
                 files="per-rank", api="aio")[0]
    print("| total rate approaching 1 GB/s with data spread over all I/O nodes (512 nodes, a file "
          f"each, cwrite) | 357-359 | {total:.0f} MiB/s |")
    for mode in ("munix", "masync"):
        vals = [rate("asci-red", "partitioned", "write", n, block=2 * MIB, size=n * 16 * MIB,
                     api="aio", sets=nighten + ("agent.count=4", f"agent.mode={mode}"))[0] / 4
                for n in (4, 16, 64)]
        print(f"| shared file, 2 MB writes, 4 fyods, -{mode}, scaled, 4/16/64 nodes | 611-620 | "
              + ", ".join(f"{v:.1f}" for v in vals) + " MiB/s |")


def red_tables():
    nodes = (16, 32, 64, 128, 256, 512)
    for phase, number in (("write", 2), ("read", 3)):
        print(f"\nTable {number} (model): aggregate {phase} MiB/s, asynchronous API, Janus /pfs/multi, "
              "a 16 MB file per node, 2 MB requests (Table 1's setup)\n")
        print("| # fyods | " + " | ".join(str(n) for n in nodes) + " |")
        print("| --- |" + " --- |" * len(nodes))
        for fyods in (1, 2, 4, 8, 16):
            vals = [rate("asci-red", "partitioned", phase, n, block=2 * MIB, size=n * 16 * MIB,
                         files="per-rank", api="aio", sets=(f"agent.count={fyods}",))[0]
                    for n in nodes]
            print(f"| {fyods} | " + " | ".join(f"{v:.0f}" for v in vals) + " |")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _args

    _args.parser(__doc__).parse_args()  # it takes no argument: any is refused in one line
    cfs_rows()
    red_rows()
    red_tables()
