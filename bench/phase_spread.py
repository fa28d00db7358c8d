"""How far a measured point's phases spread, by test family, in kept databases.

pario's figure for a point is its best trial, and a quick preset runs two
(`--iterations 2`); bench/model_local.py then takes the median of the
rounds' best.  Where a family's phases spread wide, that figure lies well
above the point's fastest phase, and a model made from a probe's best
trials is above it by as much, whatever the model gets right.  This prints,
per family (collective MPI-IO/HDF5 or not, one rank or 2-4, write or read),
every measured phase's time over the fastest phase of the same point (all
rounds and iterations of all the databases given): the median and the
share above 1.5x and 2x; and, for points of exactly two iterations, the
first one's time over the second's and how often the first was the best.

  .venv/bin/python bench/phase_spread.py KEPT_A.sqlite KEPT_B.sqlite   (databases kept by
      bench/model_local.py --keep-db)

The databases are opened read-only (nothing is written to them)."""

import json
import sqlite3
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

# Every measured point's phases: probes and predictions left out.
POINTS = ("SELECT r.preset, p.test_id, p.ranks, p.block_bytes, p.size_bytes, p.command, p.result_json"
          " FROM points p JOIN runs r ON r.id = p.run_id"
          " WHERE r.kind IS NOT 'probe' AND p.status = 'ok' AND p.result_json IS NOT NULL")


def family(command, ranks, phase):
    """A phase's family: collective or not, one rank or several, its name."""
    kind = "collective" if "--collective" in command else "other"
    return f"{kind}, {'1 rank' if ranks == 1 else '2-4 ranks'}, {phase}"


def measured_phases(paths):
    """{(point identity, phase): [(iteration, seconds), ...]} and the
    point's family, over every measured (not probe, not predicted) point of
    the databases; a point's rounds are one point."""
    phases, families = defaultdict(list), {}
    for path in paths:
        # SQLite's read-only mode: a kept database is evidence, never written
        db = sqlite3.connect(f"file:{quote(str(Path(path).absolute()))}?mode=ro", uri=True)
        try:
            rows = db.execute(POINTS).fetchall()
        except sqlite3.DatabaseError as e:
            _args.fail(f"{path}: not a pario results database ({e}): give one kept by "
                       "bench/model_local.py --keep-db")
        finally:
            db.close()
        for preset, test, ranks, block, size, command, result in rows:
            doc = json.loads(result)
            if doc.get("predicted"):
                continue
            for ph in doc.get("phases", []):
                key = (preset, test, ranks, block, size, ph["name"])
                families[key] = family(command or "", ranks, ph["name"])
                phases[key].append([(it["iteration"], it["seconds"]) for it in ph["iterations"]])
    return phases, families


def spread(phases, families):
    """Per family: its phases over their point's fastest, and the first
    iteration over the second where a point ran exactly two."""
    over, first = defaultdict(list), defaultdict(list)
    for key, rounds in phases.items():
        every = [s for r in rounds for _, s in r if s > 0]
        if not every:
            continue
        fastest = min(every)
        over[families[key]] += [s / fastest for s in every]
        for r in rounds:
            if len(r) == 2 and r[1][1] > 0:
                first[families[key]].append(r[0][1] / r[1][1])
    return over, first


def main():
    args = _args.parser(__doc__)
    args.add_argument("databases", nargs="+", metavar="DB",
                      help="results databases kept by bench/model_local.py --keep-db")
    opts = args.parse_args()
    for path in opts.databases:
        if not Path(path).is_file():
            _args.fail(f"{path}: no such database: give one kept by bench/model_local.py --keep-db")
    over, first = spread(*measured_phases(opts.databases))
    if not over:
        _args.fail(f"{', '.join(opts.databases)} hold no measured points: give a database kept by "
                   "bench/model_local.py --keep-db")
    print("phase time over the fastest phase of its point (every round and iteration)")
    print(f"{'family':34s} {'phases':>6s} {'median':>7s} {'>1.5x':>6s} {'>2x':>5s}   "
          "first/second iteration (points of two): median, first the best")
    for fam in sorted(over):
        v = sorted(over[fam])
        line = (f"{fam:34s} {len(v):6d} {statistics.median(v):6.2f}x {_share(v, 1.5):>6s} "
                f"{_share(v, 2.0):>5s}")
        f = first.get(fam)
        if f:
            line += f"   {statistics.median(f):.2f}, {sum(x < 1 for x in f)} of {len(f)}"
        print(line)


def _share(values, above):
    return f"{round(100 * sum(x > above for x in values) / len(values))}%"


if __name__ == "__main__":
    main()
