"""The model of this host, made by `pario probe`, against this host measured.

Issue 12's check: with the probed local machine, the quick CFS and ASCI Red
presets are predicted within 25 % of the measured rates at 1 to 4 ranks on
the disk (eviction on, fsync on: the presets' defaults).

Each round probes the disk (`pario probe --stream-blocks 4k,64k,1m`),
measures every quick preset on it (`pario run P --quick`, the presets in
the opposite order every other round), then predicts each preset with that
round's probe (`pario model P --quick --machine probe:RUN`).  Every point's
measured figure is the median over the rounds of its best trial (pario's
figure); its predicted figure is the median over the rounds of the
predictions.  The table prints both, their ratio, the bound the model names,
and the share of points within 25 %; then the share per round, and the
machine's own noise: how often one round's measurement lies within 25 % of
the median of the other rounds' (a bound on what any prediction can reach).

  .venv/bin/python bench/model_local.py --rounds 3 --dir /var/tmp

Everything runs in a new directory under --dir and a new results database,
both removed at the end (--keep-db PATH keeps the database for
`pario compare` and `pario report`)."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pario.analysis.compare import TOLERANCE, against_prediction  # noqa: E402
from pario.runs import measured_points  # noqa: E402
from pario.store import Store  # noqa: E402

PRESETS = ["cfs", "ascired-servers", "ascired-shared"]


def pario(db, *args):
    env = {k: v for k, v in os.environ.items() if k != "PARIO_DB"}
    r = subprocess.run([sys.executable, "-m", "pario", *args, "--db", str(db)], env=env,
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"model_local: pario {' '.join(args)} failed ({r.returncode}): "
                 f"{(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    store = Store(db, create=False)
    run_id = store.latest_run_id()
    store.close()
    return run_id


def load():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/var/tmp", help="a directory on the disk (default /var/tmp)")
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--keep-db", help="keep the results database here (a new file)")
    args = ap.parse_args()
    presets = args.presets.split(",")
    work = Path(tempfile.mkdtemp(prefix="pario-model-local-", dir=args.dir))
    db = Path(tempfile.mkdtemp(prefix="pario-model-local-db-")) / "results.sqlite"
    if args.keep_db and os.path.lexists(args.keep_db):
        sys.exit(f"model_local: --keep-db {args.keep_db} exists: give a new file")
    print(f"model_local: {args.rounds} rounds in {work}; load average {load()} (the 2 cores are "
          "shared with other work, so every figure is noisy)")
    rounds = []  # per round: {preset: (probe id, measured id, predicted id)}
    try:
        for r in range(args.rounds):
            probe = pario(db, "probe", "--dir", str(work), "--quick", "--stream-blocks", "4k,64k,1m")
            order = presets if r % 2 == 0 else presets[::-1]
            got = {}
            for p in order:
                measured = pario(db, "run", p, "--quick", "--dir", str(work))
                got[p] = [probe, measured]
            for p in presets:
                got[p].append(pario(db, "model", p, "--quick", "--machine", f"probe:{probe}"))
            rounds.append(got)
            print(f"round {r + 1}: probe run {probe}; " + "; ".join(
                f"{p}: measured run {m}, predicted run {q}" for p, (_, m, q) in got.items())
                + f"; load average {load()}")
        report(db, presets, rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if args.keep_db:
            shutil.copyfile(db, args.keep_db)
            print(f"results database kept in {args.keep_db}")
        shutil.rmtree(db.parent, ignore_errors=True)


def report(db, presets, rounds):
    store = Store(db, create=False)
    total_in = total = 0
    per_round = [[0, 0] for _ in rounds]
    noise = [0, 0]  # one round's measurement against the median of the others
    for p in presets:
        points = {}  # label -> {"m": [...], "p": [...], "bound": ...}
        for i, got in enumerate(rounds):
            _, m_id, p_id = got[p]
            pairs, _, _ = against_prediction(measured_points(store, m_id)[2],
                                             measured_points(store, p_id)[2])
            for c in pairs:
                e = points.setdefault(c.label, {"m": [], "p": [], "bound": c.bound})
                e["m"].append(c.measured.best)
                e["p"].append(c.predicted.best)
                per_round[i][0] += c.within
                per_round[i][1] += 1
        w = max(len(k) for k in points)
        print(f"\n{p} (quick), MiB/s: median over {len(rounds)} rounds of the best trial; "
              f"the prediction's median over the rounds' probes")
        print(f"{'point':<{w}}  {'measured':>9}  {'predicted':>9}  {'pred/meas':>9}  "
              f"{'within':>6}  bound   [measured in each round]")
        inside = 0
        for label, e in points.items():
            m, q = statistics.median(e["m"]), statistics.median(e["p"])
            ratio = q / m if m else float("inf")
            ok = abs(ratio - 1) <= TOLERANCE
            inside += ok
            print(f"{label:<{w}}  {m:>9.1f}  {q:>9.1f}  {ratio:>9.2f}  {'yes' if ok else 'no':>6}  "
                  f"{e['bound']:<7} [{', '.join(f'{x:.0f}' for x in e['m'])}]")
            for i, x in enumerate(e["m"]):
                others = e["m"][:i] + e["m"][i + 1:]
                if others and x:
                    noise[0] += abs(statistics.median(others) / x - 1) <= TOLERANCE
                    noise[1] += 1
        print(f"{p}: {inside} of {len(points)} points ({inside / len(points):.0%}) within "
              f"{TOLERANCE:.0%}")
        total_in += inside
        total += len(points)
    print(f"\nall presets: {total_in} of {total} points ({total_in / total:.0%}) within {TOLERANCE:.0%} "
          "(medians over rounds)")
    print("each round on its own (that round's probe against that round's measurement): "
          + ", ".join(f"{a / b:.0%} of {b}" for a, b in per_round))
    if noise[1]:
        print(f"the machine's own noise: a round's measurement lies within {TOLERANCE:.0%} of the "
              f"median of the other rounds' for {noise[0]} of {noise[1]} point-rounds "
              f"({noise[0] / noise[1]:.0%}): how well one measurement here predicts the next")
    store.close()


if __name__ == "__main__":
    main()
