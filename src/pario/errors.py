"""The one error type the CLI turns into one clear line and exit code 2."""


class UsageError(Exception):
    """A bad parameter or environment: the message names it and the fix."""


class NoRunnablePoint(UsageError):
    """A plan every point of which was left out: carries the (point, why)
    pairs so the runner prints the reasons before the one error line."""

    def __init__(self, message, skipped=()):
        super().__init__(message)
        self.skipped = list(skipped)


class RunCutShort(UsageError):
    """What a run needs went away during it (its Slurm allocation ended,
    --dir was unmounted): the run stops, marked incomplete, its points so
    far kept; exit 3, as for failed points."""
    exit_code = 3
