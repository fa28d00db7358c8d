"""The `pario` command's entry point (pyproject's [project.scripts] and
`python -m pario`).  Importing the CLI takes a noticeable time (the study
kinds, the store, the presets): a Ctrl-C then ends the command as one
during it does, with one line and exit 130, never Python's
KeyboardInterrupt traceback.  This module imports nothing else first, so
the window left is Python's own start-up."""

import sys


def main():
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        print("pario: interrupted", file=sys.stderr)
        return 130
    return cli_main()
