"""Figures of a run in the reports' shape: one per (test, phase), rate
against ranks, one series per block size, best of N trials.  The table
printer and the plotter both read this one structure."""

from dataclasses import dataclass, field

from .units import format_size


@dataclass
class Figure:
    test_id: str
    phase: str
    title: str
    size: int
    layout: str
    ranks: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    best: dict = field(default_factory=dict)      # (ranks, block) -> MiB/s
    iterations: int = 0

    @property
    def name(self):
        return f"{self.test_id}-{self.phase}"

    @property
    def heading(self):
        phase = self.phase.capitalize()
        what = self.title if self.title.lower().endswith(self.phase) else f"{self.title} {phase}"
        return f"{what} ({format_size(self.size)} file)"


def figures_of(store, run_id):
    """The run's figures in plan order (a figure first appears with its
    test's first point; write before read)."""
    figures = {}
    for row in store.best_rates(run_id):
        key = (row["test_id"], row["phase"])
        fig = figures.get(key)
        if fig is None:
            fig = figures[key] = Figure(row["test_id"], row["phase"], row["title"],
                                        row["size_bytes"], row["layout"])
        fig.best[(row["ranks"], row["block_bytes"])] = row["best"]
        fig.iterations = max(fig.iterations, row["n"])
    for fig in figures.values():
        fig.ranks = sorted({r for r, _ in fig.best})
        fig.blocks = sorted({b for _, b in fig.best})
    return list(figures.values())


def format_table(fig):
    """Rate vs ranks, one column per block size (MiB/s, best of N)."""
    head = [f"{fig.heading}: MiB/s, best of {fig.iterations}"]
    cols = [format_size(b) for b in fig.blocks]
    width = max([10] + [len(c) + 2 for c in cols])
    head.append("ranks".rjust(6) + "".join(c.rjust(width) for c in cols))
    for r in fig.ranks:
        cells = []
        for b in fig.blocks:
            v = fig.best.get((r, b))
            cells.append(("-" if v is None else f"{v:.1f}").rjust(width))
        head.append(str(r).rjust(6) + "".join(cells))
    return "\n".join(head)
