"""pario's model of a machine's I/O path: predict what we cannot run.

See docs/model.md.  Pieces: params (the parameter table), machine (TOML
machine descriptions and --set), workload (the engine's layouts), cache
(an I/O node's block cache), page_cache (a host's page cache within a
read phase), two_phase (collective buffering's file domains), simulate
(the discrete-event simulation of one point), explain (what bounded it),
predict (a result document of the engine's schema, marked predicted),
probed (the machine a stored probe measured), scope (what the model leaves
out), command (`pario model`).

Event core: pario's own (core.py), not SimPy.  The model is written
against the part of SimPy's interface it uses, so both run it and predict
the same figures; bench/model_speed.py runs both on 1024-rank CFS points
in alternating rounds (CPU seconds, medians of 3, on a shared 2-core
machine): partitioned 4 KB read 2.35 s here against 2.58 s on SimPy 4.1.2
(1.10x), partitioned 4 KB write 1.01 against 1.39 (1.37x), the 8 MB
broadcast (2 million requests) 15.3 against 21.8 (1.43x).  Ours is faster
on every point (a timeout is one heap entry that resumes its process
directly, where SimPy builds an event with a callback list), and it keeps
the front end free of another run-time dependency; SimPy stays pinned only
as the benchmark's peer.  (Both cores gain from the model's own trick:
FIFO resources whose service time is known on arrival are reservations,
one timeout per job, not queues.)
"""

from .machine import load_machine, machine_by_spec, machine_names  # noqa: F401
from .predict import predict_point  # noqa: F401
