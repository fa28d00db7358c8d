"""A predicted point as a result document of the engine's schema
(`pario.result/1`, docs/result-schema.md), marked predicted, so the store,
the tables and the plots take it as they take a measured one."""

import math
import statistics
import time
from datetime import datetime, timezone

from .. import __version__
from ..errors import UsageError
from ..units import engine_size
from .core import Environment
from .explain import explain
from .machine import caches_of
from .simulate import Simulation

MIB = float(1 << 20)


def _utc():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _summary(iterations):
    rates = [it["mib_per_s"] for it in iterations]
    best = max(range(len(rates)), key=lambda i: rates[i])
    return {"iterations": len(rates), "best_mib_per_s": rates[best],
            "median_mib_per_s": statistics.median(rates), "mean_mib_per_s": statistics.fmean(rates),
            "min_mib_per_s": min(rates), "stdev_mib_per_s": statistics.pstdev(rates),
            "best_seconds": iterations[best]["seconds"]}


def _api_options(point):
    """What the engine's MPI-IO and HDF5 backends report of the options
    asked (calls, atomic, aggregators), so records read them alike."""
    if point.api not in ("mpiio", "hdf5"):
        return {}
    options = list(getattr(point, "options", []))
    return {"calls": "collective" if "--collective" in options else "independent",
            "atomic": "--atomic" in options,
            "aggregators_asked": getattr(point, "aggregators", 0) or None}


def predict_point(point, machine, env_factory=Environment):
    """Runs `point`'s phases and iterations through the model of `machine`;
    returns the result document.  Iterations run one after the other on
    the same machine state (the I/O nodes' caches carry over, as on a real
    machine), so they can differ."""
    started, wall = _utc(), time.monotonic()
    sim = Simulation(machine, point, env_factory=env_factory)
    phases = {name: [] for name in point.phases}
    explanations = {}
    before = None  # the phase that ran before on this machine state, in words
    for it in range(point.iterations):
        for k, name in enumerate(point.phases):
            seconds, nbytes, ranks, counters = sim.run_phase(name)
            if not (math.isfinite(seconds) and seconds > 0 and nbytes / seconds / MIB > 0):
                # parameters each in range whose costs together overflow:
                # a 0.0 MiB/s with "nan% busy" is no prediction
                raise UsageError(f"{point.label()} {name}: the model's phase time is "
                                 f"{seconds:.3g} s with these parameters, no rate to predict: "
                                 "bring the --set values back to a real machine's")
            why = explain(counters, name, before=before, storage=machine.storage)
            before = name if k + 1 < len(point.phases) else f"previous trial's {name}"
            phases[name].append({
                "iteration": it, "data_iteration": it, "seconds": seconds, "bytes": nbytes,
                "mib_per_s": nbytes / MIB / seconds if seconds > 0 else 0.0,
                "cache_resident_fraction": None,
                "verify": {"checked": False, "bytes": 0, "seconds": 0.0},
                "ranks": ranks, "model": {"explanation": why, "counters": counters}})
            explanations[name] = why
    argv = ["model", "--machine", machine.name] + \
        [f"--set={k}={v}" for k, v in machine.overrides.items()] + \
        ["--layout", point.layout, "--files", point.files, "--api", point.api,
         "--block", engine_size(point.block), "--size", engine_size(point.size),
         "--phases", ",".join(point.phases), "--iterations", str(point.iterations)] + \
        (["--group", str(point.group)] if point.group else []) + list(point.extra)
    phase_docs = [{"name": n, "iterations": its, "summary": _summary(its),
                   "explanation": explanations[n]} for n, its in phases.items()]
    per_rank_files = point.files == "per-rank" and point.layout != "broadcast"
    return {
        "schema": "pario.result/1",
        "predicted": True,
        "tool": {"name": "pario-model", "version": __version__},
        "command": "model",
        "argv": argv,
        "started_utc": started,
        "finished_utc": _utc(),
        "status": "ok",
        "model": {"machine": machine.describe(), "simulation_seconds": time.monotonic() - wall},
        "mpi": {"library": f"model of {machine.name}", "standard": None, "ranks": point.ranks,
                "hosts": []},
        "target": {"dir": None, "file": None, "fs_type": f"model:{machine.name}",
                   "fs_magic": None, "node_memory_bytes": None,
                   # a probe of a tmpfs directory: its 'disks' are memory (probed.py)
                   "memory_backed": machine.storage.startswith("memory"),
                   "caches": caches_of(machine.values)},
        "params": {"layout": point.layout, "files": point.files, "api": point.api,
                   "block_bytes": point.block, "size_bytes": point.size,
                   "file_bytes": sim.file_bytes, "file_count": point.ranks if per_rank_files else 1,
                   "calls_per_rank": len(sim.offsets[0]), "phases": list(point.phases),
                   "iterations": point.iterations, "group": point.group,
                   "group_unit": "rank" if sim.per_rank_grain else "call",
                   # the engine's flags as a measured run's document states them
                   # (model/scope.py refuses the values the model cannot honour)
                   "prealloc": "--prealloc" in point.extra, "fsync": sim.fsync and "write" in point.phases,  # the engine's: only write phases sync
                   "direct": "--direct" in point.extra, "evict": "--evict" in point.extra,
                   "stripe": None, "background": None, "api_options": _api_options(point)},
        "phases": phase_docs,
        "verification": {"requested": False, "ok": True, "bytes_checked": 0},
        "kept_files": [],
        "warnings": [f"predicted by the model of machine {machine.name}, not measured"
                     + (f" (with --set {', '.join(f'{k}={v}' for k, v in machine.overrides.items())})"
                        if machine.overrides else "")] + list(machine.warnings),
    }
