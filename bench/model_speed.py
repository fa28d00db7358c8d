"""The model's event core beside SimPy on the same 1024-rank CFS points.

Runs each point through the model twice per round, once on pario's own
event core and once on SimPy (same model code: it uses only the interface
both offer), alternating which goes first, and prints the median seconds
and the ratio.  Also shows that both cores predict the same rate.

    .venv/bin/python bench/model_speed.py [--rounds 3] [--ranks 1024]
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _args  # noqa: E402  (bench/_args.py: argument checks, one line and exit 2)

from pario.model.core import Environment  # noqa: E402
from pario.model.machine import load_machine  # noqa: E402
from pario.model.predict import predict_point  # noqa: E402
from pario.studies.io import IoPoint as Point  # noqa: E402

MIB = 1 << 20


def points(ranks):
    # The CFS report's 128 MB partitioned read at 4 KB and 1 MB calls (the
    # cliff), and its 8 MB broadcast (every rank reads it all: the most
    # requests of any CFS test).
    yield Point("partitioned", "Partitioned", "partitioned", ["read"], ranks, 4096, 128 * MIB,
                iterations=1)
    yield Point("partitioned", "Partitioned", "partitioned", ["write"], ranks, 4096, 128 * MIB,
                iterations=1)
    yield Point("broadcast", "Broadcast", "broadcast", ["read"], ranks, MIB, 8 * MIB, iterations=1)


def timed(point, machine, env_factory):
    t = time.process_time()  # CPU time: the machine is shared
    doc = predict_point(point, machine, env_factory=env_factory)
    return time.process_time() - t, doc["phases"][0]["summary"]["best_mib_per_s"]


def main():
    ap = _args.parser(__doc__)
    ap.add_argument("--rounds", type=_args.count, default=3)
    ap.add_argument("--ranks", type=_args.count, default=1024)
    args = ap.parse_args()
    try:
        import simpy
    except ImportError:
        sys.exit("bench/model_speed.py: SimPy is missing: make deps (it is pinned in requirements.txt)")
    machine = load_machine("ipsc860")
    cores = {"pario core": Environment, f"simpy {simpy.__version__}": simpy.Environment}
    print(f"{args.ranks} ranks, machine ipsc860, {args.rounds} alternating rounds "
          "(the machine may be shared: medians)")
    for point in points(args.ranks):
        times = {name: [] for name in cores}
        rates = {}
        for r in range(args.rounds):
            order = list(cores.items()) if r % 2 == 0 else list(cores.items())[::-1]
            for name, factory in order:
                sec, rate = timed(point, machine, factory)
                times[name].append(sec)
                rates[name] = rate
        med = {n: statistics.median(t) for n, t in times.items()}
        own, peer = med["pario core"], med[f"simpy {simpy.__version__}"]
        print(f"{point.layout} {point.phases[0]} block {point.block // 1024}k: "
              + ", ".join(f"{n} {m:.2f} s ({rates[n]:.3f} MiB/s)" for n, m in med.items())
              + f"; simpy / pario core = {peer / own:.2f}")


if __name__ == "__main__":
    main()
