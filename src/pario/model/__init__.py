"""pario's model of a machine's I/O path: predict what we cannot run.

See docs/model.md.  Pieces: params (the parameter table), machine (TOML
machine descriptions and --set), workload (the engine's layouts), cache
(an I/O node's block cache), simulate (the discrete-event simulation of
one point), explain (what bounded it), predict (a result document of the
engine's schema, marked predicted).
"""

from .machine import load_machine, machine_from_probe, machine_names  # noqa: F401
from .predict import predict_point  # noqa: F401
