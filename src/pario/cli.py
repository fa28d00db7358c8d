"""The `pario` command."""

import argparse
import sys

from . import __version__
from .errors import UsageError
from .presets import load_experiment, preset_names
from .store import Store, default_db_path
from .studies import add_kind_options, kind_of


def _csv(text):
    return [t for t in text.split(",") if t]


def _positive(kind, noun):
    """An argparse type: a number of `kind` above zero."""
    def convert(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {noun}")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"'{text}' must be more than 0")
        return v
    return convert


_positive_float = _positive(float, "a number of seconds")
_positive_int = _positive(int, "a whole number")


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line and exit code 2."""

    def error(self, message):
        self.exit(2, f"pario: error: {message}: see '{self.prog} --help'\n")


def build_parser():
    p = _Parser(prog="pario", description="Parallel I/O benchmarks: plan, launch, store, explain.")
    p.add_argument("--version", action="version", version=f"pario {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser("run", help="run an experiment (a preset) and store its results")
    run.add_argument("experiment", help="preset name (see 'pario presets') or a .toml file "
                                        "(docs/presets.md)")
    run.add_argument("--dir", required=True, help="directory on the file system to test")
    run.add_argument("--quick", action="store_true", help="smaller sizes and rank counts: minutes on a laptop")
    run.add_argument("--ranks", type=_csv, help="rank counts, e.g. 1,2,4,8")
    run.add_argument("--tests", type=_csv, help="only these tests of the preset")
    run.add_argument("--db", default=None, help=f"results database (default {default_db_path()})")
    run.add_argument("--out", help="directory for the PNG plots")
    run.add_argument("--timeout", type=_positive_float, default=900.0,
                     help="seconds one point may take before its ranks are killed (default 900)")
    run.add_argument("--launcher", default="auto", help="auto, mpirun, mpiexec or srun")
    run.add_argument("--mpi", default="auto", choices=["auto", "openmpi", "mpich"],
                     help="the engine build to run: Open MPI's (build/engine) or MPICH's "
                          "(build/engine-mpich); the launcher follows it")
    run.add_argument("--launcher-template",
                     help="your own launch line, e.g. 'mpiexec -n {ranks} {engine} {engine_args}'")
    run.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    # Options of one study kind or another (studies/*.py): a preset refuses
    # those its kind does not take.
    add_kind_options(run)

    lst = sub.add_parser("list", help="list stored runs")
    lst.add_argument("--db", default=None)

    show = sub.add_parser("show", help="tables of one run (default: the latest)")
    show.add_argument("run", nargs="?", type=_positive_int)
    show.add_argument("--db", default=None)

    plot = sub.add_parser("plot", help="write the PNG figures of one run")
    plot.add_argument("run", nargs="?", type=_positive_int)
    plot.add_argument("--db", default=None)
    plot.add_argument("--out", help="directory for the PNG files")

    sub.add_parser("presets", help="list the experiments pario knows")

    from .model.command import add_parser as add_model_parser

    add_model_parser(sub, _csv, _positive_int)
    return p


def _store(args):
    return Store(args.db or default_db_path())


def cmd_list(args):
    store = _store(args)
    runs = store.runs()
    if not runs:
        print(f"no runs in {store.path}")
        return 0
    print(f"{'run':>4}  {'preset':<10} {'status':<11} {'started (UTC)':<21} {'points':<20} dir")
    for r in runs:
        counts = store.counts(r["id"])
        pts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none"
        print(f"{r['id']:>4}  {r['preset']:<10} {r['status']:<11} {r['started_utc']:<21} {pts:<20} {r['dir']}")
    return 0


def cmd_show(args, with_plots=False):
    from .runner import show_run

    store = _store(args)
    run_id = args.run or store.latest_run_id()
    shown = show_run(store, run_id, plots_dir=getattr(args, "out", None), with_plots=with_plots)
    if with_plots and not shown:
        raise UsageError(f"run {run_id} has no successful points to plot")
    return 0


def cmd_presets(args):
    for name in preset_names():
        preset = load_experiment(name).data
        kind = kind_of(preset)
        print(f"{name}: {preset.get('title', '')}")
        print(f"  {preset.get('summary', '')}")
        print(f"  kind {kind.name}: {kind.description}")
        for line in kind.describe(preset):
            print(f"  {line}")
    return 0


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            from .runner import run_experiment

            if args.db is None:
                args.db = str(default_db_path())
            return run_experiment(args)
        if args.command == "list":
            return cmd_list(args)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "plot":
            return cmd_show(args, with_plots=True)
        if args.command == "presets":
            return cmd_presets(args)
        if args.command == "model":
            from .model.command import run_model

            return run_model(args)
        parser.print_help()
        return 2
    except UsageError as exc:
        print(f"pario: error: {exc}", file=sys.stderr)
        return 2
