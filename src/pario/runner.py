"""`pario run`: plan -> launch each point -> store -> tables and plots.

Nothing here sits inside a timed region: the engine times itself and hands
back one result document per point."""

import json
import os
import signal
import sys
import tempfile
from pathlib import Path

from . import __version__
from .checks import check_dir, check_out, check_timeout, run_tag
from .engine import engine_path
from .errors import UsageError
from .figures import figures_of, format_table
from .launch import choose_launcher
from .nht1 import format_tables as nht1_tables, plan_nht1, plot_figures as nht1_plots
from .plan import plan
from .plot import plot_figure
from .presets import load_preset
from .progress import Progress
from .store import Store, check_db_path
from .watchdog import Watchdog, point_files, remove_point_files

# `pario run` exit status (README): 0 every point ok, 2 bad invocation or
# environment (nothing run), 3 some points failed, 130 stopped by a signal.
EXIT_POINTS_FAILED = 3


class _Interrupted(Exception):
    pass


def _engine_error(outcome):
    """The engine's own error line, else the tail of what the launcher said."""
    for line in outcome.stderr.splitlines():
        if line.startswith("pario-engine: error:"):
            return line[len("pario-engine: error: "):]
    tail = [l for l in outcome.stderr.splitlines() if l.strip() and not l.startswith("---")]
    return tail[-1] if tail else f"exit code {outcome.returncode}"


def run_experiment(args, out=sys.stdout):
    preset = load_preset(args.experiment)
    directory = check_dir(args.dir)
    check_out(args.out)
    check_timeout(args.timeout)
    extra = []
    if args.evict:
        extra.append("--evict")
    if args.direct:
        extra.append("--direct")
    if args.verify:
        extra.append("--verify")
    if preset.get("kind") == "bt":
        points, skipped = plan_nht1(preset, quick=args.quick, ranks=args.ranks,
                                    classes=args.classes, tests=args.tests)
    else:
        points, skipped = plan(preset, quick=args.quick, ranks=args.ranks, blocks=args.blocks,
                               size=args.size, iterations=args.iterations, tests=args.tests,
                               files=args.files, extra=extra)
    engine = engine_path()
    launcher = choose_launcher(args.launcher_template, args.launcher)
    max_ranks = max(p.ranks for p in points)
    for line in launcher.explain(max_ranks):
        print(line, file=out)
    for p, why in skipped:
        print(f"plan: skipping {p.label()}: {why}", file=out)
    if args.dry_run:
        for p in points:
            print(" ".join(launcher.command(p.ranks, [engine, *p.engine_args(directory, "RESULT.json")])),
                  file=out)
        return 0

    check_db_path(args.db)
    store = Store(args.db)
    options = {k: v for k, v in vars(args).items() if k not in ("func",)}
    run_id = store.start_run(preset["name"], preset.get("title", ""), directory, sys.argv,
                             options, launcher.kind, __version__)
    print(f"run {run_id}: {len(points)} points of preset {preset['name']} into {directory}; "
          f"results in {store.path}", file=out)

    def on_signal(signum, frame):
        raise _Interrupted(signal.Signals(signum).name)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    progress = Progress(len(points))
    failures = 0
    name = None
    earlier = {}  # what later points need from earlier ones (BT's T_C)
    tag = run_tag()
    watchdog = Watchdog()  # if pario is killed: ranks, files and scratch go too
    try:
        with tempfile.TemporaryDirectory(prefix="pario-results-") as scratch:
            watchdog.scratch(scratch)
            for i, p in enumerate(points):
                json_path = Path(scratch) / f"point{i}.json"
                # A name per point, unique across hosts, processes and
                # databases: if its ranks are killed, pario knows which files
                # its engine created and removes exactly those.
                name = f"pario-{tag}-run{run_id}-point{i}"
                if point_files(directory, name) or os.path.lexists(directory / name):
                    raise UsageError(f"{directory}/{name} already exists: pario will not touch a "
                                     "file it did not create; remove it or use another --dir")
                engine_argv = [engine, *p.engine_args(directory, json_path, earlier)]
                if p.takes_name():
                    engine_argv += ["--name", name]
                command = launcher.command(p.ranks, engine_argv)
                progress.start(p.label())
                outcome = launcher.run(p.ranks, engine_argv, args.timeout,
                                       guard=lambda pgid: watchdog.point(pgid, directory, name))
                remove_point_files(directory, name)  # created by this point's engine, which died
                watchdog.clear()
                if outcome.timed_out:
                    error = f"timed out after {args.timeout:g} s (raise --timeout, or look for a hung rank)"
                elif outcome.returncode != 0 or not json_path.exists():
                    error = _engine_error(outcome)
                else:
                    error = None
                if error:
                    failures += 1
                    store.add_point(run_id, p, "failed", command, outcome.seconds, error=error)
                    progress.note(f"point failed: {p.label()}: {error}")
                    progress.finish("failed")
                    continue
                result = json.loads(json_path.read_text())
                store.add_point(run_id, p, "ok", command, outcome.seconds, result=result)
                p.remember(result, earlier)
                progress.finish(p.summary(result))
    except (_Interrupted, UsageError) as exc:
        if name and not isinstance(exc, UsageError):
            remove_point_files(directory, name)
        store.finish_run(run_id, "incomplete")
        if isinstance(exc, UsageError):
            raise
        print(f"\nrun {run_id} stopped by {exc}: marked incomplete; finished points are kept",
              file=sys.stderr)
        return 130
    finally:
        watchdog.close()
        for s, h in old.items():
            signal.signal(s, h)
    store.finish_run(run_id, "complete")
    show_run(store, run_id, out, plots_dir=args.out)
    if failures:
        print(f"{failures} point(s) failed: see 'pario show {run_id}'", file=out)
    store.close()
    return EXIT_POINTS_FAILED if failures else 0


def show_run(store, run_id, out=sys.stdout, plots_dir=None, with_plots=True):
    """Print the run's tables (and write its plots); returns how many
    points succeeded, i.e. whether there was anything to show."""
    run = store.run(run_id)
    counts = store.counts(run_id)
    print(f"\nrun {run_id}: preset {run['preset']} ({run['title']}), {run['status']}, "
          f"started {run['started_utc']}, dir {run['dir']}", file=out)
    print("points: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), file=out)
    target = Path(plots_dir) if plots_dir else store.path.parent / "plots" / f"run{run_id}"
    if load_preset(run["preset"]).get("kind") == "bt":
        print(nht1_tables(store, run_id), file=out)
        _print_failures(store, run_id, out)
        if with_plots:
            paths = nht1_plots(store, run_id, target)
            print(f"\nplots: {len(paths)} PNG files in {target}", file=out)
        return counts.get("ok", 0)
    figures = figures_of(store, run_id)
    for fig in figures:
        print("\n" + format_table(fig), file=out)
    warnings = {}
    for test_id, text in store.warnings(run_id):
        warnings.setdefault(text, set()).add(test_id)
    if warnings:
        print("\nwarnings:", file=out)
        for text, tests in warnings.items():
            print(f"  - {text} [{', '.join(sorted(tests))}]", file=out)
    _print_failures(store, run_id, out)
    if with_plots and figures:
        paths = [plot_figure(fig, target, run_id) for fig in figures]
        print(f"\nplots: {len(paths)} PNG files in {target}", file=out)
    return counts.get("ok", 0)


def _print_failures(store, run_id, out):
    for p in store.points(run_id):
        if p["status"] == "failed":
            print(f"failed: {p['test_id']} {p['layout']} ranks={p['ranks']}: {p['error']}", file=out)
