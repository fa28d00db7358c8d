"""A progress line on stderr naming the point being run; one line per point
when stderr is not a terminal (logs, CI)."""

import sys
import time


class Progress:
    def __init__(self, total, stream=None):
        stream = stream or sys.stderr
        self.total, self.done, self.stream = total, 0, stream
        self.tty = stream.isatty()
        self.started = time.monotonic()

    def start(self, label):
        bar_width = 24
        filled = int(bar_width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (bar_width - filled)
        text = f"[{self.done + 1:>{len(str(self.total))}}/{self.total}] [{bar}] {label}"
        if self.tty:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self, outcome=""):
        self.done += 1
        if outcome and self.tty:
            self.stream.write(f"  {outcome}")
        if self.done == self.total and self.tty:
            self.stream.write("\n")
        self.stream.flush()

    def note(self, line):
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(line + "\n")
        self.stream.flush()
