"""The one error type the CLI turns into one clear line and exit code 2."""


class UsageError(Exception):
    """A bad parameter or environment: the message names it and the fix."""
