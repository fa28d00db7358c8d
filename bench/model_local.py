"""The model of this host, made by `pario probe`, against this host measured.

Issue 12's check: with the probed local machine, the quick CFS and ASCI Red
presets are predicted within 25 % of the measured rates at 1 to 4 ranks on
the disk (eviction on, fsync on: the presets' defaults).

Each round probes the disk (`pario probe --stream-blocks 4k,64k,1m`, or
the call sizes --stream-blocks gives),
measures every quick preset on it (`pario run P --quick`, the presets in
the opposite order every other round), then predicts each preset with that
round's probe (`pario model P --quick --machine probe:RUN`).  Every point's
measured figure is the median over the rounds of its best trial (pario's
figure); its predicted figure is the median over the rounds of the
predictions.  The table prints both, their ratio, the bound the model names,
and the share of points within 25 %; a read point whose engine counted the
device's read requests (device_reads) adds, per round, its best trial's
requests and their mean size ("device [23x1.4M, ...]").  Then, per rank count and per test
family, the model's share beside the machine's own repeatability on the
same points (how often one round's measurement lies within 25 % of the
median of the other rounds'), so a reader sees which misses are the
model's and which the machine's; then the share per round; then whether
the host handed free memory back to its hypervisor in each round (as the
round's probe recorded it), which spreads page-cache writes several-fold
between trials (docs/model.md); last, how far apart the machine puts
the same point measured twice in one run (docs/model.md, where the
machine sets the bound).

  .venv/bin/python bench/model_local.py --rounds 3 --dir /var/tmp

Everything runs in a new directory under --dir and a new results database,
both removed at the end (--keep-db PATH keeps the database for
`pario compare` and `pario report`).  `--remodel PATH` measures nothing: it
predicts the rounds of a kept database again with the current model, so two
models are judged on the same measurements.  A probe made before the model
wanted a row it has now cannot predict; `--probe RUN` then predicts every
round from probe run RUN of the database instead of the round's own, e.g.
a probe added since to a copy of it:

  cp KEPT.sqlite new.sqlite
  .venv/bin/python -m pario probe --db new.sqlite --dir /var/tmp --quick --stream-blocks 4k,64k,1m
  .venv/bin/python bench/model_local.py --remodel new.sqlite --probe N"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from pario.analysis.compare import TOLERANCE, against_prediction  # noqa: E402
from pario.errors import UsageError  # noqa: E402
from pario.model.command import MODELLED_KINDS  # noqa: E402
from pario.presets import load_experiment  # noqa: E402
from pario.studies import kind_of  # noqa: E402
from pario.runs import measured_points  # noqa: E402
from pario.store import Store  # noqa: E402

PRESETS = ["cfs", "ascired-servers", "ascired-shared"]


def pario(db, *args):
    env = {k: v for k, v in os.environ.items() if k != "PARIO_DB"}
    r = subprocess.run([sys.executable, "-m", "pario", *args, "--db", str(db)], env=env,
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        said = (r.stderr or r.stdout).strip().splitlines()
        sys.exit(f"model_local: pario {' '.join(args)} failed ({r.returncode})"
                 + (f": {said[-1]}" if said else ""))
    store = Store(db, create=False)
    run_id = store.latest_run_id()
    store.close()
    return run_id


def stream_blocks(text):
    """argparse type of --stream-blocks: two or more call sizes, each a
    multiple of 4 KiB (the model fits its costs per call and per byte over
    them, so one size is refused here rather than after a measured round);
    passed on to pario probe as given."""
    sizes = set(_args.sizes(text))
    if len(sizes) < 2:
        raise argparse.ArgumentTypeError(f"'{text}' gives {len(sizes)} call size: the model fits a "
                                         "cost per call and per byte over two or more, e.g. 4k,64k,1m")
    odd = sorted(s for s in sizes if s % 4096)
    if odd:
        raise argparse.ArgumentTypeError(f"'{text}': a call size must be a multiple of 4k "
                                         f"({odd[0]} bytes is not), e.g. 4k,64k,1m")
    return text


def load():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main():
    ap = _args.parser(__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--rounds", type=_args.count, default=3,
                    help="rounds of probe, measurement and prediction, alternating the presets' order "
                         "(default 3): a point's figure is the median over them")
    ap.add_argument("--dir", default="/var/tmp",
                    help="a directory on the disk (default /var/tmp), made if missing and then removed "
                         "again; the bench works in a new directory under it, removed after")
    ap.add_argument("--presets", help=f"the presets, comma-separated (default {','.join(PRESETS)}; "
                                      "with --remodel, those of them the database measured)")
    ap.add_argument("--keep-db", help="keep the results database here (a new file)")
    ap.add_argument("--stream-blocks", default="4k,64k,1m", metavar="SIZES", type=stream_blocks,
                    help="the probe's stream call sizes (pario probe --stream-blocks; default "
                         "4k,64k,1m): the model fits its costs per call and per byte over them")
    ap.add_argument("--iterations", type=_args.count, metavar="N",
                    help="trials per point, measured and predicted (pario run/model --iterations; "
                         "default: the quick presets' own: 3 for cfs, 2 for the ascired ones): the "
                         "figure is the best trial, so more "
                         "trials draw it less from one stalled trial")
    ap.add_argument("--remodel", metavar="DB",
                    help="measure nothing: predict the rounds a --keep-db database holds again "
                         "with this pario's model (a copy of DB is used; DB is not changed)")
    ap.add_argument("--probe", type=_args.count, metavar="RUN",
                    help="with --remodel: predict every round from this probe run of DB instead of "
                         "the round's own (a probe made since, with rows the older ones lack)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="with --remodel: change a parameter of every round's machine (pario model "
                         "--set), e.g. to see a point without one part of the model")
    args = ap.parse_args()
    presets = _presets(args.presets) if args.presets else None
    if (args.probe is not None or args.set) and not args.remodel:
        _args.fail("--probe and --set go with --remodel DB: give it")
    if args.remodel and args.stream_blocks != ap.get_default("stream_blocks"):
        _args.fail("--stream-blocks sizes the probes of a new measurement; --remodel predicts a kept "
                   "database's rounds with their own probes: drop one of them")
    if args.remodel and args.iterations is not None:
        _args.fail("--iterations sets the trials of a new measurement; --remodel predicts a kept "
                   "database's rounds as they were measured: drop one of them")
    _args.directory(args.dir, "--dir")
    if args.remodel:
        return remodel(Path(args.remodel), presets, args.probe, args.set)
    presets = presets or PRESETS
    if args.keep_db and os.path.lexists(args.keep_db):
        _args.fail(f"--keep-db {args.keep_db} exists: give a new file")
    if args.keep_db and not os.path.isdir(os.path.dirname(os.path.abspath(args.keep_db))):
        # refused now, not after minutes of measurement whose results it would lose
        _args.fail(f"--keep-db {args.keep_db}: its directory does not exist: create it or give a new "
                   "file in an existing directory")
    db = Path(tempfile.mkdtemp(prefix="pario-model-local-db-")) / "results.sqlite"
    trials = () if args.iterations is None else ("--iterations", str(args.iterations))
    rounds = []  # per round: {preset: (probe id, measured id, predicted id)}
    try:
        with _args.fresh_dir(args.dir, "pario-model-local") as work:
            each = _count(args.iterations, "trial") if args.iterations else "the quick presets' trials"
            print(f"model_local: {_count(args.rounds, 'round')} in {work}, {each} a point; load "
                  f"average {load()} (the 2 cores are shared with other work, so every figure is noisy)")
            for r in range(args.rounds):
                probe = pario(db, "probe", "--dir", str(work), "--quick", "--stream-blocks",
                              args.stream_blocks)
                order = presets if r % 2 == 0 else presets[::-1]
                got = {}
                for p in order:
                    measured = pario(db, "run", p, "--quick", "--dir", str(work), *trials)
                    got[p] = [probe, measured]
                for p in presets:
                    got[p].append(pario(db, "model", p, "--quick", "--machine", f"probe:{probe}", *trials))
                rounds.append(got)
                print(f"round {r + 1}: probe run {probe}; " + "; ".join(
                    f"{p}: measured run {m}, predicted run {q}" for p, (_, m, q) in got.items())
                    + f"; load average {load()}")
        report(db, presets, rounds)
    finally:
        if args.keep_db and db.exists():
            try:
                shutil.copyfile(db, args.keep_db)
                print(f"results database kept in {args.keep_db}")
            except OSError as e:
                print(f"bench: cannot keep the results database in {args.keep_db}: {e.strerror}",
                      file=sys.stderr)
        shutil.rmtree(db.parent, ignore_errors=True)


def _presets(text):
    """--presets: each a preset pario knows, each once (a preset given twice
    would count its points twice); refused before anything is measured."""
    names = []
    for name in text.split(","):
        try:
            kind = kind_of(load_experiment(name).data).name
        except UsageError as e:
            _args.fail(f"--presets: {e}")
        if kind not in MODELLED_KINDS:
            _args.fail(f"--presets: {name} is a study of kind {kind}, which the model does not predict: "
                       "give access-pattern (io) presets such as cfs")
        if name in names:
            _args.fail(f"--presets {text}: {name} is given twice: give each preset once")
        names.append(name)
    return names


def _count(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


def remodel(kept, presets, probe=None, sets=()):
    """The rounds of a kept database (a probe run, then each preset measured),
    each preset predicted again from its round's probe (or from `probe`)."""
    import sqlite3

    if not kept.is_file():
        _args.fail(f"--remodel {kept} is not a file: give a database kept with --keep-db")
    tmp = Path(tempfile.mkdtemp(prefix="pario-model-local-db-"))
    try:
        db = tmp / "results.sqlite"
        shutil.copyfile(kept, db)
        try:
            con = sqlite3.connect(db)
            rows = con.execute("SELECT id, preset, launcher, options_json FROM runs WHERE "
                               "status='complete' ORDER BY id").fetchall()
            con.close()
        except sqlite3.DatabaseError as e:
            _args.fail(f"--remodel {kept} is not a pario results database ({e}): give a database "
                       "kept with --keep-db")
        if probe is not None and (probe, "probe") not in {(i, p) for i, p, _, _ in rows}:
            _args.fail(f"--probe {probe}: {kept} has no complete probe run {probe}")
        if presets is None:  # the ones it measured, in the usual order
            measured = {p for _, p, launcher, _ in rows if launcher != "model"}
            presets = [p for p in PRESETS if p in measured]
        rounds, trials = [], {}  # trials: a measured run's --iterations, which its prediction takes too
        for run_id, preset, launcher, options in rows:
            if preset == "probe":
                rounds.append({"probe": run_id})
            elif rounds and launcher != "model" and preset in presets:
                rounds[-1][preset] = run_id
                iterations = json.loads(options or "{}").get("iterations")
                trials[run_id] = ("--iterations", str(iterations)) if iterations else ()
        rounds = [r for r in rounds if all(p in r for p in presets)]
        if not rounds or not presets:
            _args.fail(f"--remodel {kept} holds no round of a probe and "
                       f"{', '.join(presets) or 'any of ' + ', '.join(PRESETS)} measured: give a "
                       "database kept with --keep-db (and --presets as it was measured)")
        print(f"model_local: predicting the {len(rounds)} measured rounds of {kept} again "
              "(nothing measured now)"
              + (f", every round from probe run {probe}" if probe is not None else "")
              + "".join(f", --set {x}" for x in sets))
        extra = [f"--set={x}" for x in sets]
        got = [{p: [r["probe"], r[p], pario(db, "model", p, "--quick", "--machine",
                                             f"probe:{probe if probe is not None else r['probe']}",
                                             *trials[r[p]], *extra)]
                for p in presets}
               for r in rounds]
        report(db, presets, got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def device_requests(point):
    """'N x S' of the device's read requests over a read point's best trial
    (the engine's device_reads: how the kernel's read-ahead cut the phase;
    two ranks in interleaved calls that lose their windows show many
    requests of about a call), or None (a write, an older run, no device)."""
    its = [it for it in point.iterations() if it.get("device_reads")]
    if not its:
        return None
    d = max(its, key=lambda it: it.get("mib_per_s", 0))["device_reads"]
    if not d["requests"]:
        return "0"
    size = d["bytes"] / d["requests"]
    return f"{d['requests']}x{size / (1 << 20):.2g}M" if size >= 1 << 20 else f"{d['requests']}x{size / 1024:.0f}K"


def family(preset, test):
    """The test families the misses are told apart by."""
    if re.search(r"-g\d+$", test):
        return f"{preset} grouped"
    if preset == "ascired-servers":
        return f"{preset} {'independent' if 'indep' in test else 'collective'}"
    if preset == "cfs":
        return f"{preset} {'broadcast' if test == 'broadcast' else 'partitioned/interleaved'}"
    return f"{preset} {test}"


class Tally:
    """Per group of points: the model's score (median measured against the
    median prediction) beside the machine's own (each round's measurement
    against the median of the other rounds'), on the same points."""

    def __init__(self):
        self.model = [0, 0, 0, 0]  # within, points, predicted above, below
        self.machine = [0, 0]      # within, point-rounds

    def add(self, ratio, measured_rounds):
        self.model[0] += abs(ratio - 1) <= TOLERANCE
        self.model[1] += 1
        self.model[2] += ratio > 1 + TOLERANCE
        self.model[3] += ratio < 1 - TOLERANCE
        for i, x in enumerate(measured_rounds):
            others = measured_rounds[:i] + measured_rounds[i + 1:]
            if others and x:
                self.machine[0] += abs(statistics.median(others) / x - 1) <= TOLERANCE
                self.machine[1] += 1

    def cells(self):
        a, n, up, down = self.model
        b, k = self.machine
        mine = f"{b}/{k} ({b / k:.0%})" if k else "-"
        return [f"{a}/{n} ({a / n:.0%})", f"{up} +, {down} -", mine]


def print_tally(title, rows):
    head = ["", "model within 25%", "misses", "machine repeats within 25%"]
    body = [[name, *t.cells()] for name, t in rows]
    w = [max(len(r[i]) for r in [head] + body) for i in range(4)]
    print(f"\n{title}")
    for r in [head] + body:
        print("  " + "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)))


def report(db, presets, rounds):
    store = Store(db, create=False)
    per_round = [[0, 0] for _ in rounds]
    every, by_ranks, by_family = Tally(), {}, {}
    for p in presets:
        points = {}  # label -> {"m": [...], "p": [...], "bound": ..., "ranks", "test"}
        for i, got in enumerate(rounds):
            _, m_id, p_id = got[p]
            pairs, _, _ = against_prediction(measured_points(store, m_id)[2],
                                             measured_points(store, p_id)[2])
            for c in pairs:
                e = points.setdefault(c.label, {"m": [], "p": [], "bound": c.bound,
                                                "ranks": c.measured.ranks, "test": c.measured.test})
                e["m"].append(c.measured.best)
                e["p"].append(c.predicted.best)
                e.setdefault("dev", []).append(device_requests(c.measured))
                per_round[i][0] += c.within
                per_round[i][1] += 1
        w = max(len(k) for k in points)
        print(f"\n{p} (quick), MiB/s: median over {_count(len(rounds), 'round')} of the best trial; "
              f"the prediction's median over the rounds' probes")
        print(f"{'point':<{w}}  {'measured':>9}  {'predicted':>9}  {'pred/meas':>9}  "
              f"{'within':>6}  bound   [measured in each round]")
        mine = Tally()
        for label, e in points.items():
            m, q = statistics.median(e["m"]), statistics.median(e["p"])
            ratio = q / m if m else float("inf")
            dev = [d for d in e["dev"] if d]
            print(f"{label:<{w}}  {m:>9.1f}  {q:>9.1f}  {ratio:>9.2f}  "
                  f"{'yes' if abs(ratio - 1) <= TOLERANCE else 'no':>6}  "
                  f"{e['bound']:<7} [{', '.join(f'{x:.0f}' for x in e['m'])}]"
                  + (f" device [{', '.join(dev)}]" if dev else ""))
            for t in (mine, every, by_ranks.setdefault(e["ranks"], Tally()),
                      by_family.setdefault((family(p, e["test"]), e["ranks"] > 1), Tally())):
                t.add(ratio, e["m"])
        a, n = mine.model[0], mine.model[1]
        print(f"{p}: {a} of {n} points ({a / n:.0%}) within {TOLERANCE:.0%}")
    print_tally(f"All presets, medians over {len(rounds)} rounds: the model (median measured "
                "against median predicted) beside the machine (a round's measurement against "
                "the median of the other rounds', same points)",
                [("all points", every)] + [(f"{r} rank{'s' if r > 1 else ''}", t)
                                          for r, t in sorted(by_ranks.items())])
    print_tally("By test family and rank count",
                [(f"{f}, {'2-4 ranks' if many else '1 rank'}", t)
                 for (f, many), t in sorted(by_family.items())])
    print("\neach round on its own (that round's probe against that round's measurement): "
          + ", ".join(f"{a / b:.0%} of {b}" for a, b in per_round))
    print(free_page_reporting(store, rounds))
    print(same_point_twice(store, presets, rounds))
    store.close()


# argv options whose values name where a point ran, not what it measured
WHERE = {"--name", "--json", "--dir"}


def engine_measure(point):
    """What a point's engine measured, as its argv less the options that
    only name its files, plus the phase and rank count: two points of one run alike in
    this are the same measurement made twice (a grouped test at rank
    counts its group cannot act on runs exactly the ungrouped one)."""
    argv = point.doc.get("argv", [])
    # --group G at G ranks or fewer: every group one member, no token moves
    # (engine/src/io/group_token.h), so the engine runs as without it
    idle = {"--group"} if _group_of(argv) >= point.ranks else set()
    drop = WHERE | idle
    kept = [a for i, a in enumerate(argv) if a not in drop and (i == 0 or argv[i - 1] not in drop)]
    return (point.phase, point.ranks, tuple(kept))


def _group_of(argv):
    """The --group an engine argv gives, 0 without one."""
    for flag, value in zip(argv, argv[1:]):
        if flag == "--group" and value.isdigit():
            return int(value)
    return 0


def same_point_twice(store, presets, rounds):
    """How far apart the machine puts one measurement made twice in one
    run, at two places in its order: the best trials' ratio (larger over
    smaller) of each such pair, per round.  A model gives both one figure,
    so a pair further apart than (1 + 25 %)^2 cannot both be within 25 %
    of any prediction (docs/model.md: where the machine sets the bound)."""
    ratios = []
    for got in rounds:
        for p in presets:
            seen = {}
            for point in measured_points(store, got[p][1])[2]:
                seen.setdefault(engine_measure(point), []).append(point.best)
            ratios += [max(b) / min(b) for b in seen.values() if len(b) > 1 and min(b) > 0]
    if not ratios:
        return "the same point twice in one run: no such pair in these presets"
    over = sum(r > 1 + TOLERANCE for r in ratios)
    apart = (1 + TOLERANCE) ** 2
    beyond = sum(r > apart for r in ratios)
    return (f"the same point twice in one run (same engine command, another place in the order): "
            f"{len(ratios)} pairs over the rounds, {over} ({over / len(ratios):.0%}) more than "
            f"{TOLERANCE:.0%} apart, {beyond} more than {apart:.2f}x apart (no one figure within "
            f"{TOLERANCE:.0%} of both); the widest {max(ratios):.2f}x, the median "
            f"{statistics.median(ratios):.2f}x")


def free_page_reporting(store, rounds):
    """Whether the host handed free memory back to its hypervisor in each
    round, as each round's probe recorded it (mpi.hosts[]): with it on,
    page-cache writes spread several-fold between trials (docs/model.md, the
    hypervisor takes free memory back), so the machine repeats itself less."""
    orders = []
    for got in rounds:
        probe = next(iter(got.values()))[0]
        first = next((row["result_json"] for row in store.points(probe) if row["result_json"]), None)
        hosts = json.loads(first).get("mpi", {}).get("hosts", []) if first else []
        orders.append(next((h["free_page_reporting_order"] for h in hosts
                            if "free_page_reporting_order" in h), None))
    if all(o is None for o in orders):
        return "free page reporting: off, or not recorded (a probe before the engine recorded it)"
    return ("free page reporting (the hypervisor takes back memory that sat free; writes spread): "
            + ", ".join(f"round {i + 1} " + ("off" if o is None else f"order {o}")
                        for i, o in enumerate(orders)))


if __name__ == "__main__":
    main()
