"""`pario model EXPERIMENT --machine M [--set key=value ...]`: the
experiment's plan through the model of machine M instead of the engine.

The plan is the one `pario run` makes (the study kind's own planner, the
same --ranks, --blocks, --size, --tests ...); each point becomes a result
document of the engine's schema, marked predicted, stored as a run whose
directory column reads "predicted: model of M" so `list`, `show` and
`plot` say so."""

import argparse
import math
import sys
from pathlib import Path

from .. import __version__
from ..checks import check_out
from ..engine import engine_path
from ..engine_check import check_plan
from ..errors import NoRunnablePoint, UsageError
from ..presets import experiment_text, load_experiment
from ..progress import Progress
from ..stopping import end_early, restore_signals, stop_on_signals
from ..store import Store, add_db_option, resolve_db
from ..units import format_size
from ..studies import add_kind_options, kind_of, plan_points, refuse_foreign_options, skip_lines
from .machine import machine_by_spec, machine_names
from .params import describe_parameters
from .predict import predict_point
from .probed import unmeasured_ranks
from .scope import check_pieces, check_sets, refusals, unfollowed_sets

PREDICTED = "predicted: model of "

# The study kinds the model predicts (model/simulate.py: access patterns).
MODELLED_KINDS = ("io",)
# Options of `pario run` about real files and this machine's page cache,
# which a model has none of (fsync and trials are modelled: --no-fsync and
# --iterations are taken).  Parsed, refused by name, not listed in --help.
_ENGINE_ONLY = {"evict": "--evict", "cached": "--cached", "direct": "--direct",
                "verify": "--verify", "prealloc": "--prealloc/--no-prealloc"}


def _listed(option):
    """Whether 'pario model --help' lists a kind option: a modelled kind's
    that the model honours."""
    from ..studies import kind_named

    return option.dest not in _ENGINE_ONLY and any(
        option.dest == o.dest for k in MODELLED_KINDS for o in kind_named(k).options)


def predicted_label(run):
    """'predicted: model of M ...' for a predicted run, else None."""
    return run["dir"] if run.get("launcher") == "model" else None


def add_parser(sub, csv, positive_int):
    p = sub.add_parser("model", help="predict an experiment on a modelled machine (docs/model.md)")
    p.add_argument("experiment", nargs="?", help="preset name or a .toml file, as for 'pario run'")
    p.add_argument("--machine", help=f"machine description: one of {', '.join(machine_names())}, "
                                     "a file (a path ending in .toml or holding a /), or probe:RUN for this host as a stored "
                                     "'pario probe --stream-blocks 4k,64k,1m' run measured it")
    p.add_argument("--set", action="append", default=None, metavar="KEY=VALUE",
                   help="change one machine parameter, e.g. --set io_node.cache=5MB (repeatable)")
    p.add_argument("--parameters", action="store_true",
                   help="list the model's parameters with their units and meanings, then exit")
    p.add_argument("--print-machine", action="store_true",
                   help="print --machine (with --set) as a machine TOML file, every value with its "
                        "source, then exit (keep it with '> my-host.toml')")
    p.add_argument("--quick", action="store_true", help="the preset's quick sweep")
    p.add_argument("--ranks", type=csv, help="rank counts, e.g. 1,16,128,1024")
    p.add_argument("--tests", type=csv, help="only these tests of the preset")
    add_db_option(p, "the runs (created if missing)")
    p.add_argument("--out", help="directory for the PNG plots")
    # 'pario run --dir' by habit: refused by name (run_model), not taken as
    # an abbreviation of --direct
    p.add_argument("--dir", dest="run_dir", help=argparse.SUPPRESS)
    add_kind_options(p, listed=_listed)
    return p


def model_points(experiment, options):
    """(points, skipped) of `experiment` (a loaded io preset) under `options`
    as the command line gives them: the kind's own plan, as 'pario run'
    makes it, with the model's defaults.  The one way in for the command,
    bench/model_claims.py and the validation tests, so the docs' figures
    are those of the points 'pario model' predicts."""
    # The model is deterministic: one trial per point unless asked (trials
    # then differ where the I/O nodes' caches carry over, docs/model.md).
    return _plan(experiment, {**options, "iterations": options.get("iterations") or 1})


def _plan(experiment, options):
    # No launcher limits a modelled machine: a preset sweeping ranks up to
    # the slots goes to its own max_ranks (the CFS report's 128 nodes).
    options = {**options, "slots": 1 << 20, "slots_from": "a modelled machine"}
    from ..runner import shown_points

    points, skipped = plan_points(experiment, options)
    points, unshown = shown_points(experiment.data, points, skipped)
    return points, skipped + unshown


def measured_trials(experiment, options):
    """The trials per point a measured run of this plan takes (its best is
    the figure): the plan as 'pario run' makes it, before the model's own
    default of one deterministic trial."""
    points, _ = _plan(experiment, options)
    return points[0].iterations if points else None


def predict_preset(name, machine, **options):
    """[(point, result document)] of 'pario model NAME' with `options`
    (tests=["partitioned"], ranks=["16"], blocks=["1m"], size="128m", ...)
    on `machine`, without storing anything; a point the plan skips or the
    model leaves out is an error here (a figure must not go missing)."""
    points, skipped = model_points(load_experiment(name), options)
    points, refused = refusals(points, machine)
    check_pieces(points, machine)
    if skipped or refused:
        raise UsageError(f"pario model {name} {options}: "
                         + "; ".join([f"{p.label()}: {why}" for p, why in skipped] + refused))
    return [(p, predict_point(p, machine)) for p in points]


def run_model(args, out=None):
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    if args.parameters:
        print("units: sizes and rates in powers of 1024 (4k = 4 KiB, 5MB = 5 MiB, 2.8MB/s = 2.8 MiB/s; "
              "k, MB, GB in either case), times in s, ms, us or ns; 0 where a line says what 0 means",
              file=out)
        print("\n".join(describe_parameters()), file=out)
        return 0
    if not args.machine:
        raise UsageError(f"pario model needs --machine: one of {', '.join(machine_names())}, "
                         "a .toml file or probe:RUN")
    if args.run_dir is not None:
        raise UsageError("--dir is where 'pario run' measures; pario model measures nothing: drop it "
                         "(a probe's directory is in its run: --machine probe:RUN)")
    # probe:RUN reads the probe from the results database, which must exist
    db, db_label = resolve_db(args.db)
    store = None
    if args.machine.startswith("probe:"):
        if not Path(db).exists():  # the probe is what it lacks, not a run
            raise UsageError(f"no results database at {db}: --machine {args.machine} reads a "
                             "probe run from it: make one with 'pario probe --dir DIR --stream-blocks "
                             "4k,64k,1m', or name the database with --db")
        # --print-machine only reads the probe: a colleague's database on
        # a read-only share serves; a predicted run needs it writable
        store = Store(db, create=False, readonly=bool(args.print_machine), label=db_label)
    options = {k: v for k, v in vars(args).items()
               if k not in ("func", "parameters", "print_machine", "run_dir")}
    experiment = load_experiment(args.experiment) if args.experiment else None
    kind = kind_of(experiment.data) if experiment else None
    if kind is not None and kind.name not in MODELLED_KINDS:
        # before anything plans it: only an access-pattern plan has the
        # points (and trials) the model and a probe's machine are made for
        raise UsageError(f"{experiment.origin} is a study of kind {kind.name}, which the model does "
                         "not predict: use an access-pattern (io) preset such as cfs")
    # A measured figure is the best of its run's trials (the preset's
    # iterations, or --iterations): the probe's rows are taken as the best
    # of that many (probed.as_best_of), not of however many the probe
    # happened to run; a printed machine too, so that it predicts as
    # probe:RUN does for points of that many trials.
    trials = None
    if store is not None:
        trials = measured_trials(experiment, options) if experiment else args.iterations
    machine = machine_by_spec(args.machine, args.set or [], store, trials)
    if args.print_machine:
        from .machine import machine_toml

        # a printed machine carries its --set as a what-if: one that needs
        # others at 0, or equals the machine's own value, is refused as for a run
        check_sets([], machine, "the printed machine")

        print(machine_toml(machine), end="", file=out)
        return 0
    if experiment is None:
        raise UsageError("pario model needs an experiment: e.g. 'pario model cfs --machine ipsc860'")
    check_out(args.out)  # as 'pario run': before anything is stored
    preset = experiment.data
    for dest, flag in _ENGINE_ONLY.items():
        if options.get(dest) is not None:  # kind options default to None: given
            raise UsageError(f"{flag} acts on real files and does not apply to pario model: drop it")
    refuse_foreign_options(kind, options, experiment.origin)
    try:
        points, skipped = model_points(experiment, options)
    except NoRunnablePoint as exc:  # the reasons and the size that fits, then the one error line
        for line in skip_lines(exc.skipped, [], options):
            print(f"plan: {line}", file=out)
        raise
    for line in skip_lines(skipped, points, options):
        print(f"plan: {line}", file=out)
    # Before anything is stored: leave out the points whose parameters the
    # model would ignore (model/scope.py), one line per test and parameter.
    points, refused = refusals(points, machine)
    for line in refused:
        print(f"plan: {line}", file=out)
    if not points:
        raise UsageError(f"the model predicts no point of {experiment.origin} on machine {machine.name}: "
                         "every test has a parameter it does not model (listed above); measure it "
                         "with 'pario run'")
    # What the engine would refuse to run it would be wrong to predict:
    # the engine's own check of every point (engine_check), as 'pario run'.
    check_plan(engine_path(), points, Path.cwd(), experiment)
    # then what the model cannot simulate in time (scope.py): a plan the
    # engine refuses is told the engine's reason first
    check_pieces(points, machine)
    check_sets(points, machine, experiment.origin)  # a what-if that changes nothing is no run
    # a one-rank probe's machine predicting points of more ranks says so
    # and a --set of a one-stream rate that its points of several ranks do not use
    machine.warnings = (machine.warnings + unmeasured_ranks(machine, points, store)
                        + unfollowed_sets(machine, points))
    for line in machine.warnings:  # stored with every point too: show and report say it again
        print(f"plan: warning: {line}", file=out)
    for line in getattr(kind, "plan_notes", lambda *a: [])(preset, points, options):
        print(f"plan: {line}", file=out)

    label = PREDICTED + machine.name + _sets(machine)
    # A machine whose times overflow (an absurd --set: a rate of 1e-320,
    # a latency of 1e308 s) predicts 0.0 MiB/s "nan% busy": refused before
    # anything is stored, from its first point; a later point that still
    # does is stored as failed, never as a prediction of zero.
    # The first point can take a minute (1024 ranks): a signal then stops
    # it in one line, as at any later point, nothing stored yet.
    old = stop_on_signals()
    try:
        first = predict_point(points[0], machine)
        why = unphysical(first)
        if why:
            raise UsageError(f"the model of {machine.name}{_sets(machine)} predicts {why} for "
                             f"{points[0].label()}: its times overflow; give --set values in a physical range")
        out.flush()  # an output that cannot be written refuses here, before anything is stored
    except BaseException as exc:
        restore_signals(old)
        return end_early(None, None, exc)
    store = store or Store(db, label=db_label)
    run_id = None
    try:
        run_id = store.start_run(preset["name"], preset.get("title", ""), label, sys.argv, options,
                                 "model", __version__, kind=kind.name,
                                 experiment_toml=experiment.text, experiment_origin=experiment.origin,
                                 planned=len(points))
        print(f"run {run_id}: {len(points)} point{'s' * (len(points) != 1)} of "
              f"{experiment_text(preset['name'], experiment.origin)} {label}; "
              f"results in {store.path}", file=out)
        out.flush()
        progress = Progress(len(points))
        for i, p in enumerate(points):
            progress.start(p.label())
            doc = first if i == 0 else predict_point(p, machine)
            command = ["pario", *doc["argv"]]
            why = unphysical(doc)
            if why:
                error = f"the model predicts {why}: its times overflow; give --set values in a physical range"
                store.add_point(run_id, p, "failed", command, doc["model"]["simulation_seconds"], error=error)
                progress.note(f"point failed: {p.label()}: {error}")
                progress.finish("failed")
                continue
            store.add_point(run_id, p, "ok", command, doc["model"]["simulation_seconds"], result=doc)
            progress.finish(p.summary(doc) + "; " + "; ".join(
                f"{ph['name']}: {ph['explanation']['bound']}" for ph in doc["phases"]))
    except BaseException as exc:  # a signal, a UsageError, standard output gone ...
        return end_early(store, run_id, exc)
    finally:
        restore_signals(old)
    store.finish_run(run_id)
    from ..runner import EXIT_PLOTS_NOT_WRITTEN, output_of_stored_run, show_stored_run

    with output_of_stored_run(run_id, EXIT_PLOTS_NOT_WRITTEN, out) as shown:
        plotted = show_stored_run(store, run_id, shown, args.out)
    store.close()
    return 0 if plotted else EXIT_PLOTS_NOT_WRITTEN


def unphysical(doc):
    """What is wrong with a predicted document whose numbers are not a
    measurement's ("a rate of 0.0 MiB/s", "a time of inf s"), or ""."""
    for ph in doc["phases"]:
        for it in ph["iterations"]:
            seconds, rate = it["seconds"], it["mib_per_s"]
            if not (math.isfinite(seconds) and seconds > 0):
                return f"a {ph['name']} time of {seconds:g} s"
            if it["bytes"] and not (math.isfinite(rate) and rate > 0):
                return f"a {ph['name']} rate of {rate:g} MiB/s"
    return ""


def _sets(machine):
    return "".join(f" --set {k}={v}" for k, v in machine.overrides.items())


def bound_lines(store, run_id):
    """One line per predicted point and phase: what bounded it."""
    import json

    lines = []
    for p in store.points(run_id):
        if p["status"] != "ok" or not p["result_json"]:
            continue
        doc = json.loads(p["result_json"])
        for ph in doc.get("phases", []):
            why = ph.get("explanation")
            if why:
                lines.append(f"  {p['test_id']} {ph['name']} ranks={p['ranks']} "
                             f"block={format_size(p['block_bytes'])}: {why['text']}")
    return lines
