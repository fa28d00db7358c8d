"""How a run ends early, the same for `pario run`, its shortcuts (`pario
probe`) and `pario model`: SIGINT and SIGTERM stop it with one line and
exit 130; any other error that leaves the run unfinished (a failed
database, standard output gone) is said by the CLI as ever.  Either way
the run is stopped in the store (Store.stop_run: marked incomplete; one
an error stopped before its first point is removed)."""

import signal
import sys

# exit status of a run stopped by SIGINT or SIGTERM (the README's table)
EXIT_STOPPED = 130
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(Exception):
    """A run stopped by a signal; str() is its name (SIGINT, SIGTERM)."""


def stop_on_signals():
    """From now on SIGINT or SIGTERM raises Stopped; returns the handlers
    to give back to restore_signals (in the run's `finally`, after its
    clean-up).  The first signal stops the run; a second (people press
    Ctrl-C again when a run does not stop at once) must not cut the
    clean-up short, so it is ignored."""
    def on_signal(signum, frame):
        for s in _SIGNALS:
            signal.signal(s, lambda *_: None)
        raise Stopped(signal.Signals(signum).name)

    return {s: signal.signal(s, on_signal) for s in _SIGNALS}


def restore_signals(old):
    for s, h in old.items():
        signal.signal(s, h)


def end_early(store, run_id, exc):
    """The run `run_id` (None: never stored) did not finish because of
    `exc`: stop it in the store, then say a signal's stop in one line and
    return its exit status; any other error is raised again for the CLI's
    one line."""
    stopped = isinstance(exc, Stopped)
    if run_id is not None:
        store.stop_run(run_id, keep_empty=stopped)
    elif store is not None:
        store.remove_if_unused()  # a database made for this run, which never began
    if not stopped:
        raise exc
    if run_id is None:
        print(f"\npario: stopped by {exc} before the run was stored", file=sys.stderr)
    else:
        print(f"\nrun {run_id} stopped by {exc}: marked incomplete; finished points are kept",
              file=sys.stderr)
    return EXIT_STOPPED
