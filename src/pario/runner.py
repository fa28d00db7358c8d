"""`pario run`: plan -> launch each point -> store -> tables and plots.

Nothing here sits inside a timed region: the engine times itself and hands
back one result document per point."""

import contextlib
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from .checks import check_dir, check_out, check_timeout, run_tag
from .engine import engine_mpi, engine_path
from .engine_check import check_plan
from .dir_fs import dir_fs, moved_away
from .errors import NoRunnablePoint, RunCutShort, UsageError
from .explain import explain_run
from .figures import Param, Record, build, filled_title, split_varying, why_left_out
from .launch import choose_launcher, signal_report
from .version import describe as describe_version
from .model.command import bound_lines, predicted_label
from .plot import Palette, check_figure_paths, plot_figure
from .safefile import check_directory, check_makeable, make_directory
from .presets import (load_experiment, parse_experiment, preset_figures, preset_names, Experiment,
                      experiment_text)
from .progress import Progress
from .rundirs import NOTE, RunDirs
from .space import check_space
from .stopping import Stopped, end_early, restore_signals, stop_on_signals
from .store import Store, check_db_path, resolve_db
from .terminal import print_figure
from .units import format_size
from .studies import (in_users_terms, kind_of, kinds, plan_points, refuse_foreign_options,
                      refuse_unused_options, skip_lines)
from .watchdog import Watchdog, names_in_use, new_ledger, remove_point_files

# `pario run` exit status (README): 0 every point ok, 2 bad invocation or
# environment (nothing run), 3 some points failed, 4 every point ok and
# stored but the plots could not be written, 5 the results database failed
# the run (db_moved), 130 stopped by a signal (stopping).
EXIT_POINTS_FAILED = 3
EXIT_PLOTS_NOT_WRITTEN = 4


# The words of the engine's line for a rank that crashed (engine/src/util/fail.c).
CRASH_WORDS = " crashed with signal "


# A launcher's refusals whose cause is a paragraph before its last line
# (which alone said "proceed at your own risk" or "Exited with exit code
# 1", tester 16): the words that give each away, and its one line.
LAUNCHER_REFUSALS = (
    ("has detected an attempt to run as root",  # after the launcher's own name: mpirun.openmpi, mpiexec
     "Open MPI's launcher refused to run as root (OMPI_ALLOW_RUN_AS_ROOT=1 and "
     "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, which pario sets, did not reach it): keep both in the "
     "launch's environment, or run pario as another user"),
    ("but OMPI was not built with SLURM",  # "... SLURM's PMI support", "... SLURM support"
     "Open MPI's ranks were started by srun without PMIx: give srun --mpi=pmix in the template "
     "(pario's own srun launcher does)"),
)


def _engine_error(outcome):
    """The engine's own error line (a crashed rank's first: the others'
    lines are what its crash did to them), else the launcher's report of a
    rank ended by a signal, else a launcher's refusal it knows
    (LAUNCHER_REFUSALS), else the tail of what the launcher said."""
    prefix = "pario-engine: error: "
    errors = [l[len(prefix):] for l in outcome.stderr.splitlines() if l.startswith(prefix)]
    crashed = [e for e in errors if CRASH_WORDS in e]
    if crashed or errors:
        return (crashed or errors)[0]
    signalled = signal_report(outcome.stderr + outcome.stdout)  # MPICH's report is on stdout
    if signalled:
        return signalled
    said = " ".join((outcome.stderr + outcome.stdout).split())  # a paragraph's words, whatever its lines
    for words, line in LAUNCHER_REFUSALS:
        if words in said:
            return line
    tail = [l for l in outcome.stderr.splitlines() if l.strip() and not l.startswith("---")]
    return tail[-1] if tail else f"exit code {outcome.returncode}"


def _no_result(launcher, engine):
    """A launch that ended well without the engine's result document: the
    launch line did not run the engine with its arguments."""
    what = ("--launcher-template runs {engine} {engine_args}" if launcher.kind == "template"
            else f"{engine} is pario-engine (PARIO_ENGINE)")
    return f"the launch ended with code 0 but the engine wrote no result document: check that {what}"


def run_experiment(args, out=None):
    out = out or sys.stdout  # looked up now, not at import (redirected output)
    experiment = load_experiment(args.experiment)
    preset = experiment.data
    kind = kind_of(preset)
    options = {k: v for k, v in vars(args).items() if k not in ("func",)}
    refuse_foreign_options(kind, options, f"{experiment.origin}")
    refuse_unused_options(kind, preset, options)
    directory = check_dir(args.dir)
    check_out(args.out)
    check_timeout(args.timeout)
    db, db_label = resolve_db(args.db)
    check_db_path(db, db_label)
    mpi = getattr(args, "mpi", None)
    engine = engine_path(mpi)
    launcher = choose_launcher(args.launcher_template, args.launcher, mpi=engine_mpi(engine, mpi))
    options["slots"], options["slots_from"] = launcher.slots()
    try:
        points, skipped = plan_points(experiment, options)
        points, unshown = shown_points(preset, points, skipped)
    except NoRunnablePoint as exc:  # the reasons first, then the one error line
        for line in skip_lines(exc.skipped, [], options):
            print(f"plan: {line}", file=out)
        raise
    for line in skip_lines(list(skipped) + unshown, points, options):  # as pario model says them
        print(f"plan: {line}", file=out)
    for line in kind.plan_notes(preset, points, options):
        print(f"plan: {line}", file=out)
    for line in _figures_left_out(kind, preset, points, options):
        print(f"plan: {line}", file=out)
    _check_normalise(preset, points)
    tag = run_tag()
    dirs = RunDirs(directory, [d for p in points for d in _subdirs(p)], tag)
    dirs.check()  # before anything is stored
    # what the engine would refuse at a point, and the free space: once,
    # before anything is stored, not as a run of failed points
    for check in (lambda: check_plan(engine, points, directory, experiment),
                  lambda: check_space(points, directory, kind)):
        try:
            check()
        except UsageError as exc:
            if not args.dry_run:
                raise
            print(f"plan: warning: {exc}", file=out)  # a dry run shows the plan all the same
    # how the ranks start, once the plan stands: a refused plan's line is
    # not preceded by the launcher's
    for line in launcher.explain(max(p.ranks for p in points)):
        print(line, file=out)
    if args.dry_run:
        for p in points:
            print(" ".join(launcher.command(p.ranks, [engine, *p.engine_args(directory, "RESULT.json")])),
                  file=out)
        return 0

    out.flush()  # an output that cannot be written refuses here, before anything is stored
    store = Store(db, label=db_label)
    run_id = progress = None
    failures = 0
    name = ledger = None
    earlier = {}  # what later points need from earlier ones (the kind's remember())
    started_on = dir_fs(directory)  # every point is held to it (a mount gone mid-run)
    watchdog = Watchdog()  # if pario is killed: ranks, files and scratch go too
    # removed in `finally`, after the handler below has read the point's ledger
    scratch_dir = tempfile.TemporaryDirectory(prefix="pario-results-")
    old = stop_on_signals()  # given back in `finally`, after the clean-up
    try:
        with contextlib.nullcontext(scratch_dir.name) as scratch:
            run_id = store.start_run(preset["name"], preset.get("title", ""), directory, sys.argv,
                                     options, launcher.kind, describe_version(), kind=kind.name,
                                     experiment_toml=experiment.text,
                                     experiment_origin=experiment.origin, planned=len(points))
            print(f"run {run_id}: {len(points)} point{'s' * (len(points) != 1)} of "
                  f"{experiment_text(preset['name'], experiment.origin)} into {directory}; "
                  f"results in {store.path}", file=out)
            out.flush()
            progress = Progress(len(points))
            watchdog.scratch(scratch)
            dirs.create(on_create=watchdog.made)
            for i, p in enumerate(points):
                # --dir unmounted since (a lazy umount, a network mount gone):
                # a point now would write its whole file into the mount point
                # on the file system below, so the run stops here
                now = dir_fs(directory)
                if started_on is not None and (now is None or now.device != started_on.device):
                    raise RunCutShort(f"--dir {directory} is no longer on the file system the run started on "
                                      f"({started_on} -> {now or 'not reachable'}): was it unmounted? run {run_id} "
                                      f"stops before its point {i + 1}, marked incomplete, its points so far kept; "
                                      "remount it and run again")
                json_path = Path(scratch) / f"point{i}.json"
                # A name per point, unique across hosts, processes and
                # databases: if its ranks are killed, pario knows which files
                # its engine created and removes exactly those.
                name = f"pario-{tag}-run{run_id}-point{i}"
                subdirs = _subdirs(p)
                if names_in_use(directory, name, subdirs):
                    raise UsageError(f"{directory}/{name} already exists: pario will not touch a "
                                     "file it did not create; remove it or use another --dir")
                engine_argv = [engine, *p.engine_args(directory, json_path, earlier)]
                if p.takes_name():
                    engine_argv += ["--name", name]
                command = launcher.command(p.ranks, engine_argv)
                progress.start(p.label())
                gone = _gone_subdirs(directory, subdirs)
                if gone:  # said as pario's, not as the engine's --stripe-dirs the user never gave
                    failures += 1
                    store.add_point(run_id, p, "failed", command, 0.0, error=gone)
                    progress.note(f"point failed: {p.label()}: {gone}")
                    progress.finish("failed")
                    continue
                # the engine lists each file it makes here, so only those are removed
                ledger = Path(scratch) / f"point{i}.owned"
                outcome = launcher.run(p.ranks, engine_argv, args.timeout, env=new_ledger(ledger),
                                       guard=lambda pgid: watchdog.point(pgid, directory, name, ledger, subdirs))
                # what a failed or killed engine left behind, and nothing else
                unremoved = []
                left = remove_point_files(directory, name, subdirs, ledger, unremoved)
                # the engine's own files that would not go: said with the point, never silently
                stuck = [f"{f} is this point's engine's file, but it could not be removed ({why}): "
                         "remove it yourself" for f, why in unremoved]
                watchdog.clear()
                if outcome.timed_out or outcome.stopped:  # stopped: a rank dead, its launcher waiting on
                    error = outcome.stopped or (f"timed out after {args.timeout:g} s (raise --timeout, "
                                                "or look for a hung rank)")
                    if outcome.note:
                        error += f"; {outcome.note}"
                elif outcome.returncode != 0:
                    # in the terms of the command the user ran, not the engine's options
                    error = in_users_terms(_engine_error(outcome), kind, p)
                elif not json_path.exists():
                    error = _no_result(launcher, engine)
                else:
                    error = moved_away(directory, started_on, json.loads(json_path.read_text()))
                for f in left:  # the engine's own line may already say so
                    if not error or str(f) not in error:
                        progress.note(f"{f} is not a file this point's engine created: left alone")
                for line in stuck:
                    progress.note(f"warning: {line}")
                if error:
                    failures += 1
                    gone = launcher.gone()  # every later point would fail alike
                    # stored with the point, so show says why the run stopped here
                    error = "; ".join([error, *stuck, *([f"{gone}: the run stopped here"] if gone else [])])
                    store.add_point(run_id, p, "failed", command, outcome.seconds, error=error)
                    progress.note(f"point failed: {p.label()}: {error}")
                    progress.finish("failed")
                    if gone:
                        raise RunCutShort(f"{gone} during run {run_id}: the run stops, marked incomplete, "
                                          f"its points so far kept (see 'pario show {run_id}'); start it "
                                          "again in a live allocation")
                    continue
                result = json.loads(json_path.read_text())
                # The engine's warnings about what the plan chose on purpose
                # (optional in the point contract) would only confuse.
                expected = tuple(getattr(p, "expected_warnings", ()))
                # and the fixes they name in the terms of the command the user ran
                users = getattr(p, "warning_in_users_terms", lambda w: w)
                result["warnings"] = [users(w) for w in result.get("warnings", [])
                                      if not (expected and w.startswith(expected))] + stuck
                store.add_point(run_id, p, "ok", command, outcome.seconds, result=result)
                p.remember(result, earlier)
                progress.finish(p.summary(result))
    except BaseException as exc:  # a signal, a UsageError, standard output gone ...
        if name and isinstance(exc, Stopped):
            remove_point_files(directory, name, subdirs, ledger)
        return end_early(store, run_id, exc)
    finally:
        if progress:
            progress.close()
        for line in dirs.remove(on_remove=watchdog.unmade):
            print(f"pario: {line if line.startswith(NOTE) else 'warning: ' + line}", file=sys.stderr)
        watchdog.close()
        scratch_dir.cleanup()
        restore_signals(old)
    store.finish_run(run_id)
    with output_of_stored_run(run_id, EXIT_POINTS_FAILED if failures else EXIT_PLOTS_NOT_WRITTEN, out) as shown:
        plotted = show_stored_run(store, run_id, shown, args.out)
        if failures:
            print(f"{failures} point(s) failed: see 'pario show {run_id}'", file=shown)
    store.close()
    if failures:
        return EXIT_POINTS_FAILED
    return 0 if plotted else EXIT_PLOTS_NOT_WRITTEN


class StoredButUnshown(UsageError):
    """Standard output failed after a run was stored whole: the one line
    says the run is there; the exit status is the run's (3 with failed
    points, else 4), never 2, which says nothing was stored."""


class ReaderMayLeave:
    """A stream whose reader may leave (`pario run ... | head -3`): what is
    printed after that goes nowhere, so the plots after the tables are
    still written; `left` says it happened."""

    def __init__(self, stream):
        self._stream, self.left = stream, False

    def write(self, text):
        if not self.left:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self.left = True
        return len(text)

    def flush(self):
        if not self.left:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self.left = True

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def reader_may_leave(stream):
    """The stream as a ReaderMayLeave for the block; a reader that left
    during it is said after it, as BrokenPipeError (the CLI's silent
    exit 141), once everything else (the plots) is done."""
    shown = ReaderMayLeave(stream)
    yield shown
    if shown.left:
        raise BrokenPipeError("the reader of standard output left")


@contextlib.contextmanager
def output_of_stored_run(run_id, exit_code, out):
    """Around what `run`, `model` and `probe` print after storing a run
    (its tables, the failed points' line), printed to the stream it yields
    (`out`, watched): standard output that cannot be written then (a disk
    filled up) is one line naming the stored run, not "nothing stored".  A
    reader that left (`| head -1`) stays silent, and the run's plots are
    written all the same (BrokenPipeError after the block: exit 141)."""
    with reader_may_leave(out) as shown:
        try:
            yield shown
        except OSError as exc:
            error = StoredButUnshown(f"cannot write to standard output ({exc.strerror or exc}): run {run_id} "
                                     f"is stored, complete: see it with 'pario show {run_id}' where there is "
                                     "room")
            error.exit_code = exit_code
            raise error from exc


def show_stored_run(store, run_id, out, plots_dir):
    """show_run of a run just stored (measured or predicted): whether its
    plots were written.  A plot that cannot be written (a name taken by a
    file pario did not write, a link at the plots folder) is a warning
    after the tables: the run is whole and stored, not "nothing stored"
    (exit 2); the caller exits 4."""
    refusals = []
    show_run(store, run_id, out, plots_dir=plots_dir, refused=refusals.append)
    for exc in refusals:
        print(f"pario: warning: run {run_id} is stored, but not all its plots were written: {exc} "
              f"(then 'pario plot {run_id} --out DIR')", file=sys.stderr)
    return not refusals


def _gone_subdirs(directory, subdirs):
    """The error for a stripe target of this run that is no longer a
    directory (another process removed it mid-run), or ""."""
    for name in subdirs:
        path = Path(directory) / name
        if path.is_symlink() or not path.is_dir():
            return (f"{path}, a stripe target pario made or checked for this run, is gone or no longer a "
                    "directory (removed by another process?): keep other writers out of --dir")
    return ""


def _subdirs(point):
    """Directories under --dir a point needs (optional in the point contract:
    a striped io test's targets)."""
    return point.subdirs() if hasattr(point, "subdirs") else []


def _experiment_of(run):
    """The run's own experiment (kept with it), or for a run stored before
    pario kept them, the shipped preset of its name."""
    if run.get("experiment_toml"):
        origin = run.get("experiment_origin") or run["preset"]
        return Experiment(parse_experiment(run["experiment_toml"], f"run {run['id']} ({origin})"),
                          run["experiment_toml"], origin)
    if run["preset"] not in preset_names():
        # an experiment file's run, stored before runs kept the file's text
        raise UsageError(f"run {run['id']} is of an experiment file named {run['preset']}, which the older "
                         "pario that stored it did not keep: this pario cannot read its figures; "
                         "'pario list' and runs of shipped presets still work")
    return load_experiment(run["preset"])


def run_views(store, run_id):
    """(run, kind, experiment, options, records, figure data) of a stored run."""
    run = store.run(run_id)
    experiment = _experiment_of(run)
    kind = kind_of(experiment.data)
    options = json.loads(run["options_json"] or "{}")
    records = []
    for p in store.points(run_id):
        if p["status"] != "ok" or not p["result_json"]:
            continue
        point = dict(p)
        point["params"] = json.loads(p["params_json"]) if p["params_json"] else {}
        try:
            records += kind.records(point, json.loads(p["result_json"]))
        except (KeyError, TypeError, ValueError) as exc:
            # a point stored without what its kind reads now (a database an
            # older pario wrote before points kept their plan, or edited)
            what = f"its {exc.args[0]!r} is missing" if isinstance(exc, KeyError) else "a value is malformed"
            raise UsageError(f"run {run_id}'s point {p['test_id']} cannot be read as a point of kind {kind.name} "
                             f"({what}): it was stored by an older pario, or the database was changed; "
                             "'pario list' and 'pario show' of other runs still work") from None
    records = kind.finish(records)
    # a model's figures say so in every table and plot title, and show no trials
    predicted = predicted_label(run) or ""
    data = [d for d in (build(f, records, kind.params, kind.quantities, predicted)
                        for whole in _figures(kind, experiment, records, options)
                        for f in split_varying(whole, records, kind.params)) if d]
    _name_unnumbered(run_id, data)
    return run, kind, experiment, options, records, data


def _name_unnumbered(run_id, data):
    """A figure the experiment does not number is "Figure R<run>-<n>" in
    show, plot and report alike: never read as the experiment's own
    "Figure 4", nor as another run's."""
    n = 0
    for d in data:
        if not d.figure.number:
            n += 1
            d.figure = replace(d.figure, number=f"Figure R{run_id}-{n}")
            d.heading = f"{d.figure.number}. {d.heading}"


def describes_figures(store, run_id):
    """Whether a run's kind or experiment describes any figure (drawn, or
    left out with its reason): a probe's does not."""
    _, kind, experiment, options, records, data = run_views(store, run_id)
    return bool(data or _figures(kind, experiment, records, options))


def _figures(kind, experiment, records, options):
    """The run's figure descriptions: its kind's and its experiment's own.
    An experiment's figure gets the kind's heading note after its own, so
    its heading says what ran (fsync or not, evicted or not, O_DIRECT), not
    what the experiment meant to run: the command line may override it."""
    own = []
    for f in preset_figures(experiment.data):
        ran = kind.heading_note([r for r in records if f.selects(r) and r.values.get(f.y)])
        own.append(replace(f, note="; ".join(n for n in (f.note, ran) if n)))
    return kind.figures(experiment.data, records, options) + own


def planned_records(plan):
    """A plan point's parameters (`point.params()`, as stored) as the
    records its result will give: one per phase, no values yet.  For the
    figures' `where` (Figure.selects, planned), and for a failed point's
    rows in `pario export` (pario.runs)."""
    params = {k: v for k, v in plan.items() if k != "phases"}
    if not plan.get("phases"):
        return [Record(params, {})]
    return [Record({**params, "phase": ph}, {}) for ph in plan["phases"]]


def shown_points(preset, points, skipped=()):
    """(points, unshown): an experiment that draws only its own figures
    (kind_figures = false) runs no point that none of them shows; each
    one left out says which figure needs what.  'pario model' plans
    through it too, so a prediction has the points a run measures.  None
    left is NoRunnablePoint, carrying the plan's `skipped` and these."""
    figs = preset_figures(preset)
    if preset.get("sweep", {}).get("kind_figures", True) or not figs:
        return points, []
    # a figure whose planned points are all of its reference tests (beside)
    # draws nothing: their points are shown by none of it
    every = [r for p in points for r in planned_records(p.params())]
    beside_only = [f for f in figs if f.only_beside([r for r in every if f.selects(r, planned=True)])]
    figs = [f for f in figs if f not in beside_only]
    shown, unshown = [], []
    for p in points:
        records = planned_records(p.params())
        if any(f.selects(r, planned=True) for f in figs for r in records):
            shown.append(p)
            continue
        references = [f for f in beside_only if any(f.selects(r, planned=True) for r in records)]
        if references:
            others = dict.fromkeys(t for f in references for t in f.where.get("test", ()) if t not in f.beside)
            unshown.append((p, f"{', '.join(f.number or f.id for f in references)} draw it only as a reference "
                               f"beside their other tests, none of which is in the plan: give --tests with "
                               f"{' or '.join(others)} too"))
            continue
        needs = {}
        for f in figs:
            for k, want in f.where.items():
                if k in ("test", "phase") or k not in records[0].params:
                    continue
                wants = list(want) if isinstance(want, (list, tuple)) else [want]
                if records[0].params[k] not in wants:
                    fmt = _param_text(preset, k)
                    needs.setdefault(f"{k} {' or '.join(fmt(w) for w in wants)}", []).append(f.number or f.id)
                    break
        why = "; ".join(f"{', '.join(n)}: {w}" for w, n in needs.items())
        unshown.append((p, f"no figure of {preset['name']} shows it ({why})" if why
                        else f"no figure of {preset['name']} shows it"))
    if not shown:
        raise NoRunnablePoint(f"no point of the plan is shown by a figure of {preset['name']}: give "
                              "--tests, --ranks or --blocks among the figures' (see the skips above)",
                              list(skipped) + unshown)
    return shown, unshown


def _param_text(preset, key):
    return kind_of(preset).params.get(key, Param(key)).fmt


def _figures_left_out(kind, preset, points, options):
    """The plan's line for each experiment figure that will show nothing,
    and why (figures.why_left_out on the planned points)."""
    records = [r for p in points for r in planned_records(p.params())]
    absent = kind.absent(preset, options)
    out = []
    for f in preset_figures(preset):
        why = why_left_out(f, records, kind.params, absent, planned=True)
        if why:
            out.append(f"{f.number or 'figure ' + f.id} ({filled_title(f, records, kind.params)}) left out: {why}")
    return out


def _check_normalise(preset, points):
    """A figure's normalise value that no point of the plan has would leave
    the figure empty: refuse it before anything runs."""
    for fig in preset_figures(preset):
        for key, value in fig.normalise.items():
            if not any(p.params().get(key) == value for p in points):
                have = sorted({str(p.params().get(key)) for p in points})
                raise UsageError(f"figure {fig.id}: normalise {key} = {value} matches no point of "
                                 f"the plan ({key}: {', '.join(have)}): normalise by one of those "
                                 f"or add {key} {value} to the sweep")


def show_run(store, run_id, out=None, plots_dir=None, with_plots=True, refused=None):
    """Print the run's tables (and write its plots); returns how many
    points succeeded, i.e. whether there was anything to show.  Plots that
    cannot be written refuse before anything is printed, or, given
    `refused`, are handed to it and left out while the tables print."""
    out = out or sys.stdout  # the stdout of the moment (a default would be import time's)
    run, kind, experiment, options, records, figures = run_views(store, run_id)
    probe, explained = explain_run(store, run_id, kind, figures)
    predicted = predicted_label(run)  # the figures' headings say so already (run_views)
    counts = store.counts(run_id)
    # The default folder carries the database's whole file name: two
    # databases side by side (r.sqlite, r.db) each have a run 1, and neither
    # may replace the other's figures.
    target = Path(plots_dir) if plots_dir else store.path.parent / "plots" / f"{store.path.name}-run{run_id}"
    # The folders pario makes: --out's last name, or the default's two
    # (pario's plots/ beside the database and the run's folder in it).
    folders = [target] if plots_dir else [target.parent, target]
    option, fix = ("--out", "give another --out") if plots_dir else ("", "remove it or give --out DIR")
    drawn = [d for d in figures if d.figure.plot]  # a table-only figure is printed, never drawn
    if with_plots and drawn:  # a taken name refuses before anything is printed or written
        try:
            for folder in folders:
                check_directory(folder, option, fix)
                check_makeable(folder, option)
            check_figure_paths(drawn, target, run_id, store)
        except UsageError as exc:
            if refused is None:
                raise
            refused(exc)
            with_plots = False
    titled = f" ({run['title']})" if run["title"] else ""  # an experiment file may have none
    print(f"\nrun {run_id}: {experiment_text(run['preset'], run.get('experiment_origin'))}{titled}, "
          f"{run['status']}, "
          f"started {run['started_utc']}, dir {run['dir']}", file=out)
    print(f"points: {store.points_text(run)}", file=out)
    checked = verification_text([json.loads(p["result_json"]) for p in store.points(run_id)
                                 if p["status"] == "ok" and p["result_json"]])
    if checked:
        print(f"verified: {checked}", file=out)
    for table in kind.tables(experiment.data, records, options):
        print(table, file=out)
    if probe.run and any(e.ideal for e in explained):  # nht1's and the suite's figures take none
        print(f"ideal curves from the probe of this host and file system (run {probe.run})", file=out)
    elif probe.why_none:
        print(probe.why_none, file=out)
    for e in explained:
        print_figure(e.data, e.lines(), out)
    warnings = {}
    for test_id, text in store.warnings(run_id):
        warnings.setdefault(text, set()).add(test_id)
    notes = kind.notes(experiment.data, records, options)
    absent = kind.absent(experiment.data, options)
    notes += [f"{f.number or 'figure ' + f.id} ({filled_title(f, records, kind.params)}) left out: {why}"
              for f in _figures(kind, experiment, records, options)
              if f.id not in {d.figure.id for d in figures}
              and (why := why_left_out(f, records, kind.params, absent))]
    if warnings or notes:
        print("\nwarnings:", file=out)
        for text, tests in warnings.items():
            print(f"  - {text} [{', '.join(sorted(tests))}]", file=out)
        for text in notes:
            print(f"  - {text}", file=out)
    if predicted:
        print("\nmodel: what bounded each point", file=out)
        print("\n".join(bound_lines(store, run_id)), file=out)
    _print_failures(store, run_id, out)
    if with_plots and drawn:
        try:
            _write_plots(drawn, folders, target, run_id, store, option, fix)
            print(f"\nplots: {len(drawn)} PNG files in {target}", file=out)
        except UsageError as exc:  # a name taken since the check above
            if refused is None:
                raise
            refused(exc)
    return counts.get("ok", 0)


def _write_plots(drawn, folders, target, run_id, store, option, fix):
    """The plots, in their folders (made where missing).  When a plot
    cannot be written (a disk full), a folder made here that holds
    nothing is removed again: no empty folder is left of a refusal."""
    made = []
    try:
        for folder in folders:
            fresh = not os.path.lexists(folder)
            make_directory(folder, option, fix)
            if fresh:
                made.append(folder)
        palette = Palette()
        for k, fig in enumerate(drawn):
            try:
                plot_figure(fig, target, run_id, palette, store)
            except UsageError as exc:  # a disk that filled: say what is there, not only what is not
                if not k:
                    raise
                raise UsageError(f"{exc} ({k} of {len(drawn)} plots were written to {target} before it, "
                                 "the others not: plotting again replaces pario's own)") from None
    except BaseException:
        for folder in reversed(made):  # the deepest first; rmdir leaves any that holds a file
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise


def verification_text(docs):
    """What a run's stored results say of checking their own data (the
    kernels always do: BT's norms, Laplace's grid, FLASH-IO's and
    b_eff_io's reads; io with --verify), for show and the report alike;
    "" when no point checked anything.  A point whose check failed is not
    stored as a success, so every checked one passed."""
    checked = [d for d in docs if (d.get("verification") or {}).get("performed")
               or (d.get("verification") or {}).get("requested")]
    if not checked:
        return ""
    passed = sum(1 for d in checked if d["verification"].get("ok"))
    return (f"every point's data checked, and it matched ({passed} of {len(docs)})" if len(checked) == len(docs)
            else f"{len(checked)} of {len(docs)} points checked their data; {passed} matched")


def failure_line(p):
    """A stored failed point as show and the report name it: its test (and
    layout), ranks and call size, so two failures of one test at two call
    sizes read apart (tester 11), then the engine's line."""
    names = " ".join(dict.fromkeys(x for x in (p["test_id"], p["layout"]) if x))  # each once
    block = f" block={format_size(p['block_bytes'])}" if p["block_bytes"] else ""
    plan = json.loads(p.get("params_json") or "{}")
    if plan.get("study") in kinds():  # a kernel's point: its class, subtype, size (tester 19)
        from .studies.kernel import KERNEL_PLAN_KEYS, settings_text

        shown = settings_text(plan["study"], {k: v for k, v in plan.items() if k not in KERNEL_PLAN_KEYS})
        block += f" {shown}" if shown else ""
    return f"{names} ranks={p['ranks']}{block}: {p['error']}"


def _print_failures(store, run_id, out):
    for p in store.points(run_id):
        if p["status"] == "failed":
            print(f"failed: {failure_line(p)}", file=out)
