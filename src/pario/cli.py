"""The `pario` command."""

import argparse
import json
import re
import sys

from . import __version__
from .checks import check_out, check_timeout
from .errors import UsageError
from .presets import load_experiment, preset_names
from .store import Store, add_db_option, resolve_db
from .studies import add_kind_options, kind_of, kinds


from .studies import csv_list as _csv  # noqa: E402  (one list rule for every option)


def _positive(kind, noun):
    """An argparse type: a number of `kind` above zero."""
    def convert(text):
        # int() takes ' 3' and Arabic-Indic digits ('٣') too: a whole
        # number here is written in ASCII digits and nothing else
        digits = text[1:] if text.startswith("-") else text  # a negative one is told as such below
        if kind is int and not (digits.isascii() and digits.isdigit()):
            raise argparse.ArgumentTypeError(f"'{text}' is not {noun}")
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {noun}")
        if v != v:  # NaN passes every comparison below as false: a gate that never fails
            raise argparse.ArgumentTypeError(f"'{text}' is not {noun}")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"'{text}' must be more than 0")
        if v >= 1 << 63:  # SQLite's integers, and far beyond any count pario keeps
            raise argparse.ArgumentTypeError(f"'{text}' is too large")
        return v
    return convert


_positive_float = _positive(float, "a number of seconds")


def _timeout(text):
    """--timeout: finite, above 0, at most a week."""
    v = _positive_float(text)
    try:
        return check_timeout(v)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
_positive_int = _positive(int, "a whole number")


def one_line(text):
    """A message as one printable line, whatever the user typed into it:
    control characters and undecodable bytes shown escaped."""
    text = str(text).encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line and exit code 2, and an
    option of one value given twice is refused (argparse kept the last:
    `--size 8m --size 16m` ran 16m without a word; the engine refuses it
    too), where a list option (--set) may repeat."""

    def error(self, message):
        self.exit(2, f"pario: error: {one_line(message)}: see '{self.prog} --help'\n")

    def parse_known_args(self, args=None, namespace=None):
        seen = set()
        for text in (args if args is not None else sys.argv[1:]):
            if text == "--":
                break
            flag = text.split("=", 1)[0]
            action = self._option_string_actions.get(flag) if text.startswith("-") else None
            if isinstance(action, argparse._StoreAction):  # one value: a second would replace it
                if action.dest in seen:
                    self.error(f"{flag} is given twice: give it once")
                seen.add(action.dest)
        return super().parse_known_args(args, namespace)


def _add_run_id(parser, what):
    parser.add_argument("run", nargs="?", type=_positive_int,
                        help=f"the run to {what}: its id in 'pario list' (default: the latest)")


def _add_run_options(run):
    """The options of `pario run` and of every kind's shortcut (`pario probe`)."""
    run.add_argument("--dir", required=True, help="a directory on the file system to test")
    run.add_argument("--quick", action="store_true", help="smaller sizes and rank counts: minutes on a laptop")
    run.add_argument("--ranks", type=_csv, help="rank counts, e.g. 1,2,4,8")
    run.add_argument("--tests", type=_csv, help="only these tests of the preset")
    add_db_option(run, "the runs (created if missing)")
    run.add_argument("--out", help="directory for the PNG plots (default: plots/DBFILE-runN beside the database)")
    run.add_argument("--timeout", type=_timeout, default=900.0,
                     help="seconds one point may take before its ranks are killed (default 900)")
    run.add_argument("--launcher", help="auto (default), mpirun, mpiexec or srun")
    run.add_argument("--mpi", default="auto", choices=["auto", "openmpi", "mpich"],
                     help="the engine build to run: Open MPI's (build/engine) or MPICH's "
                          "(build/engine-mpich); the launcher follows it")
    run.add_argument("--launcher-template",
                     help="your own launch line, e.g. 'mpiexec -n {ranks} {engine} {engine_args}'")
    run.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")


def build_parser():
    p = _Parser(prog="pario", description="Parallel I/O benchmarks: plan, launch, store, explain.")
    p.add_argument("--version", action="version", version=f"pario {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser("run", help="run an experiment (a preset) and store its results")
    run.add_argument("experiment", help="preset name (see 'pario presets') or a file: a path "
                                        "ending in .toml or holding a / (docs/presets.md)")
    _add_run_options(run)
    # Options of one study kind or another (studies/*.py): a preset refuses
    # those its kind does not take.
    add_kind_options(run)

    lst = sub.add_parser("list", help="list stored runs")
    add_db_option(lst, "the runs")

    show = sub.add_parser("show", help="tables of one run (default: the latest)")
    _add_run_id(show, "show")
    add_db_option(show, "the run")

    plot = sub.add_parser("plot", help="write the PNG figures of one run")
    _add_run_id(plot, "draw")
    add_db_option(plot, "the run")
    plot.add_argument("--out", help="directory for the PNG files")

    sub.add_parser("presets", help="list the experiments pario knows")

    cmp_ = sub.add_parser("compare", help="two runs point by point: ratio and verdict beyond chance",
                          description="Two stored runs point by point: B's rate over A's and whether "
                                      "the difference is beyond chance (an exact rank test per point, "
                                      "the points sharing a 5 % budget for false calls; the whole run "
                                      "by its median ratio).  Also measured "
                                      "against predicted: a run of 'pario model' held against the "
                                      "measured run it models (e.g. 'pario compare 3 7', 3 measured, "
                                      "7 predicted).")
    cmp_.add_argument("run_a", type=_positive_int, help="the reference run (e.g. the measured one)")
    cmp_.add_argument("run_b", type=_positive_int,
                      help="the run held against it (e.g. a later run, or the predicted one)")
    cmp_.add_argument("--fail-below", type=_positive(float, "a ratio such as 0.9"), metavar="R",
                      help="exit 1 when a point called slower, or the whole run's median ratio with 95 %%, "
                           "lies below R x run A (e.g. 0.9)")
    add_db_option(cmp_, "both runs")

    exp = sub.add_parser("export", help="every trial of every point of a run, one row each")
    _add_run_id(exp, "export")
    fmt = exp.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv",
                     help="comma-separated values, a header row then one row per trial")
    fmt.add_argument("--json", dest="format", action="store_const", const="json",
                     help="a JSON array of one object per trial")
    exp.add_argument("--out", help="the file to write (default: standard output): a new file, or one "
                                   "an earlier 'pario export --out' wrote and nobody changed since")
    add_db_option(exp, "the run")

    rep = sub.add_parser("report", help="one self-contained HTML file of one or more runs")
    rep.add_argument("runs", nargs="+", type=_positive_int, metavar="RUN",
                     help="the runs to put in the report, by their ids in 'pario list'")
    rep.add_argument("--out", required=True, help="the new .html file to write")
    rep.add_argument("--point", type=_positive_int,
                     help="the point whose per-rank timeline to draw (ids: 'pario export RUN --csv')")
    add_db_option(rep, "the runs")
    for kind in kinds().values():
        if kind.command:  # its own usage and help; runs as 'pario run <command>'
            short = sub.add_parser(
                kind.command, help=f"{kind.description}: 'pario run {kind.command}' with the same options",
                description=f"{kind.description}. Runs the preset '{kind.command}' "
                            f"(the same as 'pario run {kind.command} ...') and stores its results.")
            _add_kind_run_options(short, kind)
    from .model.command import add_parser as add_model_parser

    add_model_parser(sub, _csv, _positive_int)
    return p


def _add_kind_run_options(parser, kind):
    """`pario run`'s options and those of one study kind, listed; other
    kinds' options are parsed but not listed, so giving one gets run's one
    line ("--blocks does not apply to ...")."""
    _add_run_options(parser)
    for opt in kind.options:
        opt.add_to(parser)
    seen = {o.flags[0] for o in kind.options}
    for other in kinds().values():
        for opt in other.options:
            if opt.flags[0] not in seen:
                seen.add(opt.flags[0])
                parser.add_argument(*opt.flags, **{**opt.kwargs, "help": argparse.SUPPRESS})


def _experiment_help(argv):
    """`pario run NAME --help`: the options NAME's kind takes, not every
    kind's (tester 19: nht1's help listed --blocks, which nht1 refuses).
    False when NAME is no experiment pario can read (the generic help)."""
    from .presets import load_experiment
    from .studies import kind_of

    try:
        experiment = load_experiment(argv[1])
        kind = kind_of(experiment.data)
    except (UsageError, OSError):
        return False
    parser = _Parser(prog=f"pario run {argv[1]}",
                     description=f"{experiment.data.get('title') or experiment.origin}: a study of kind "
                                 f"{kind.name} ({kind.description}).")
    _add_kind_run_options(parser, kind)
    parser.print_help()
    return True


def _store(args, readonly=True):
    """The results database, which must already exist: reading commands
    never create one.  readonly=False: opened to record the files the
    command writes (plot, export --out: see safefile), where SQLite can
    write it (Store.for_records)."""
    path, label = resolve_db(args.db)
    if readonly:
        return Store(path, create=False, readonly=True, label=label)
    return Store.for_records(path, label)


def cmd_list(args):
    store = _store(args)
    runs = store.runs()
    if not runs:
        print(f"no runs in {store.path}")
        return 0
    from .studies import options_text

    rows = []
    for r in runs:
        pts = store.points_text(r)
        try:
            given = options_text(json.loads(r["options_json"] or "{}")) or "-"
        except (ValueError, AttributeError):
            given = "?"   # not pario's JSON: the run is listed all the same
        rows.append((str(r["id"]), r["preset"], r["status"], r["started_utc"], pts, given, r["dir"]))
    head = ("run", "preset", "status", "started (UTC)", "points", "options", "dir")
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head) - 1)]
    for row in [head, *rows]:  # each column as wide as its widest cell
        print("  ".join([row[0].rjust(widths[0]), *(c.ljust(w) for c, w in zip(row[1:-1], widths[1:])),
                         row[-1]]))
    return 0


def cmd_show(args, with_plots=False):
    from .runner import describes_figures, reader_may_leave, show_run

    if with_plots:
        check_out(getattr(args, "out", None))  # a file or an unwritable place: before anything
    store = _store(args, readonly=not with_plots)
    run_id = args.run or store.latest_run_id()
    if with_plots and store.counts(run_id).get("ok") and not describes_figures(store, run_id):
        raise UsageError(f"run {run_id} ({store.run(run_id)['preset']}) has no figures to plot: "
                         f"'pario show {run_id}' prints its tables")
    # plot's tables to a reader that leaves (| head) must not cost the plots
    with reader_may_leave(sys.stdout) as out:
        shown = show_run(store, run_id, out=out, plots_dir=getattr(args, "out", None), with_plots=with_plots)
    if with_plots and not shown:
        run = store.run(run_id)
        raise UsageError(f"run {run_id} has no successful points to plot ({run['status']}: "
                         f"{store.points_text(run)}): see 'pario show {run_id}' for why")
    store.warn_unrecorded()
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


def _writes_only_files(argv):
    """export and report with --out give nothing on standard output: they
    run with it closed (pario sets /dev/null on it first, so no file it
    opens takes descriptor 1)."""
    return bool(argv) and argv[0] in ("export", "report") and any(
        a == "--out" or a.startswith("--out=") for a in argv[1:])


def main(argv=None):
    if sys.stdout is None and _writes_only_files(sys.argv[1:] if argv is None else argv):
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:
            os.dup2(devnull, 1)
            os.close(devnull)
        sys.stdout = open(1, "w", closefd=False)
    if sys.stdout is None:
        # `pario list >&-`: Python gives no stdout for a closed descriptor 1,
        # and the next file opened (the database) would take its number;
        # nothing runs (tester 11).
        if sys.stderr is not None:
            print("pario: error: standard output is closed: send it somewhere, e.g. > /dev/null "
                  "or > FILE", file=sys.stderr)
        return 2
    if not isinstance(sys.stdout, _WatchedStdout):
        sys.stdout = _WatchedStdout(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, _UnfailingStderr):
        sys.stderr = _UnfailingStderr(sys.stderr)
    try:
        code = _main(argv)
        sys.stdout.flush()  # a failure here is one line too, not one at exit
        return code
    except BrokenPipeError:
        # `pario show | head -1`: the reader left; say nothing more.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("pario: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if not _stdout_failed(exc):
            # a path the checks did not foresee failing this way (a network
            # mount that stopped answering between two looks): one line too
            from .checks import directory_fix

            where = f"{exc.filename}: " if exc.filename else ""
            print(f"pario: error: {where}{exc.strerror or exc}: {directory_fix(exc)}", file=sys.stderr)
            return 2
        # `pario list > /dev/full`, `export --csv` onto a full disk: one line
        _drop_stdout()
        print(f"pario: error: cannot write to standard output: {exc.strerror or exc}: free space "
              "or send the output elsewhere", file=sys.stderr)
        return 2


class _WatchedStdout:
    """sys.stdout, noting whether a write or flush of it failed, so main
    tells a failed standard output from any other OSError."""

    # Text is handed on in pieces smaller than the stream's buffer: given
    # more than its buffer at once, CPython's buffered writer drops the
    # rest without a word when the system call writes only part of it (a
    # disk filling up: `export --csv > F` left 8 KiB of 87 and exited 0,
    # tester 12); through the buffer, the next write raises ENOSPC.
    PIECE = 4096

    def __init__(self, stream):
        self._stream = stream
        self.failed = False

    def write(self, text):
        try:
            for i in range(0, len(text), self.PIECE):
                self._stream.write(text[i:i + self.PIECE])
            return len(text)
        except OSError:
            self.failed = True
            raise

    def flush(self):
        try:
            return self._stream.flush()
        except OSError:
            self.failed = True
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _drop_stdout():
    """Standard output failed: what is left in its buffer goes nowhere, so
    Python's own flush at exit fails no second time (exit 120)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    try:
        sys.stdout.flush()
    except OSError:
        pass


class _UnfailingStderr:
    """sys.stderr, whose failing write (`2>/dev/full`) is let go: there is
    nowhere else to say it, and neither a measurement nor the exit status
    that tells how it went should end because its progress or its one
    line of error could not be printed."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError:
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except OSError:
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _stdout_failed(exc):
    return isinstance(sys.stdout, _WatchedStdout) and sys.stdout.failed


# `pario run` exits 0 when every point succeeded, 2 on a bad invocation or
# environment (nothing run or stored), 3 when some points failed (stored as
# failures: see `pario show`), 4 when the plots could not be written, 5 when
# the results database failed the run (db_moved), 130 when stopped by a
# signal (stopping).
def _defaults(parser):
    """{dest: default} over the parser and all its subcommands."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.update(_defaults(sub))
        else:
            found.setdefault(action.dest, action.default)
    return found


def _subparser(parser, name):
    """The parser of subcommand `name` (the command line's), else `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return parser


def _refuse_empty(args, parser):
    """A value given as '' is a mistake (an unset shell variable), never
    "the default": refuse it for every option, whoever adds the option.
    (argparse turns a value of "--" into [], refused the same way.)  What
    an option needs is said as the subcommand given says it: run's --out is
    a plots directory, report's a new .html file."""
    parser = _subparser(parser, args.command)
    defaults = _defaults(parser)
    needs = _required(parser)
    for dest, value in vars(args).items():
        if isinstance(value, (str, list)) and not value and value != defaults.get(dest):
            flag = dest if dest == "experiment" else "--" + dest.replace("_", "-")
            if dest in needs:  # leaving it out is no way out: say what it needs
                raise UsageError(f"{flag} is empty: {flag} needs {needs[dest]}")
            raise UsageError(f"{flag} is empty: give a value or leave the option out")


def _required(parser):
    """{dest: its help} of the options a subcommand cannot go without."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.update(_required(sub))
        elif action.required and action.option_strings and action.help:
            found[action.dest] = action.help
    return found


def _options_with_a_value(parser):
    """Every option string (of every subcommand) that takes one value."""
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options_with_a_value(sub)
        elif isinstance(action, argparse._StoreAction) and action.nargs is None:
            found.update(s for s in action.option_strings if s.startswith("--"))
    return found


def _attach_negative_values(parser, argv):
    """`--blocks -4k`: argparse takes '-4k' for an option and says only
    "expected one argument"; joined as `--blocks=-4k` the value reaches
    pario's own check, which names what is wrong with it."""
    valued = _options_with_a_value(parser)
    out = []
    i = 0
    while i < len(argv):
        if argv[i] == "--":
            return out + argv[i:]
        if argv[i] in valued and i + 1 < len(argv) and re.match(r"-[0-9.]", argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def _parse(parser, argv):
    """parse_args, but an unknown option is refused by the subcommand it
    was given to, so the line points at that subcommand's --help
    ('pario model --help', not 'pario --help')."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        _subparser(parser, getattr(args, "command", None) or "").error(
            f"unrecognized arguments: {' '.join(extras)}")
    return args


def _main(argv=None):
    parser = build_parser()
    argv = _attach_negative_values(parser, list(sys.argv[1:] if argv is None else argv))
    if argv[:1] == ["run"] and len(argv) > 1 and not argv[1].startswith("-") \
            and any(a in ("-h", "--help") for a in argv) and _experiment_help(argv):
        return 0
    if argv[:1] and argv[0] in {k.command for k in kinds().values() if k.command}:
        _parse(parser, argv)  # the shortcut's own --help, and its name in usage errors
        argv = ["run", *argv]  # a kind's shortcut runs its preset of the same name
    args = _parse(parser, argv)
    try:
        _refuse_empty(args, parser)
        if args.command == "run":
            from .runner import run_experiment

            return run_experiment(args)
        if args.command == "list":
            return cmd_list(args)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "plot":
            return cmd_show(args, with_plots=True)
        if args.command == "presets":
            return cmd_presets(args)
        if args.command == "compare":
            from .compare_runs import compare_command

            return compare_command(_store(args), args.run_a, args.run_b, args.fail_below)
        if args.command == "export":
            from .export import export_command

            store = _store(args, readonly=not args.out)
            return export_command(store, args.run or store.latest_run_id(), args.format, args.out)
        if args.command == "report":
            from .export import write_new_file
            from .report.build import build_report

            from .safefile import check_replaceable

            if not args.out.lower().endswith((".html", ".htm")):  # report.HTML too
                raise UsageError(f"--out {args.out}: name the report file *.html")
            check_replaceable(args.out)  # before the report is built, not after (write_new_file again)
            text = build_report(_store(args), args.runs, args.point)
            write_new_file(args.out, text)
            # on stderr, as export's: standard output is for what a command gives
            print(f"report of run(s) {', '.join(map(str, args.runs))}: {args.out}", file=sys.stderr)
            return 0
        if args.command == "model":
            from .model.command import run_model

            return run_model(args)
        parser.print_help()
        return 2
    except UsageError as exc:
        if _stdout_failed(exc):  # a run stored, its output not written (runner.output_of_stored_run)
            _drop_stdout()
        print(f"pario: error: {one_line(exc)}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)  # 2, or what an error says about a run already stored
