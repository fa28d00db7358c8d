"""Progress of a run on stderr: on a terminal a rich progress bar naming
the point being run, with each finished point's outcome printed above it;
otherwise (logs, CI) one plain line per point."""

import sys


class Progress:
    def __init__(self, total, stream=None):
        stream = stream or sys.stderr
        self.total, self.done, self.stream = total, 0, stream
        self.tty = stream.isatty()
        self.label = ""
        self._bar = None
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, \
                TextColumn, TimeElapsedColumn

            self._console = Console(file=stream)
            self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=self._console, transient=True)
            self._task = self._bar.add_task("", total=total)
            self._bar.start()

    def start(self, label):
        self.label = label
        if self._bar:
            self._bar.update(self._task, description=label)
        else:
            self.stream.write(f"[{self.done + 1:>{len(str(self.total))}}/{self.total}] {label}\n")
            self.stream.flush()

    def finish(self, outcome=""):
        self.done += 1
        if self._bar:
            self._bar.console.print(f"{self.label}: {outcome}", markup=False, highlight=False)
            self._bar.update(self._task, completed=self.done)
            if self.done >= self.total:
                self.close()

    def note(self, line):
        if self._bar:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def close(self):
        """Leave the terminal as it was (also when a run is interrupted)."""
        if self._bar:
            self._bar.stop()
            self._bar = None
