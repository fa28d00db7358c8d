"""PNG plots of `figures.FigureData`, in the reports' style: the x
parameter on its axis (log2 for ranks and sizes), one line per series,
best of the trials, the min-median spread as error bars when the figure
asks for it, and the figure's reference lines (zeta's 0.1).

Colours follow series labels through a `Palette` shared by every figure
of a run, so one write method has one colour on all its plots; a series
parameter that lists its values (`Param.order`) gives them the same
colours in every run."""

import contextlib
import io
import sys
import textwrap
import warnings
from pathlib import Path

from .safefile import check_replaceable, write_new_file

_MARKERS = "os^vD<>ph*"
_FIX = "remove it or plot into another --out"
# Characters a title line holds before it wraps, by figure width (inches):
# a longer line ran past the PNG's edge and lost its qualifiers.
_TITLE_CHARS = {6.4: 72, 8.4: 96}
_glyphs_said = False


@contextlib.contextmanager
def missing_glyphs_as_one_note():
    """matplotlib warns, with a line of its source, for every character
    its font cannot draw (a title in CJK or with an emoji): pario says it
    once per command, on one line, and lets any other warning through."""
    global _glyphs_said
    with warnings.catch_warnings(record=True) as caught:  # the filters in force choose what is caught
        yield
    said = set()
    for w in caught:
        text = str(w.message)
        if "missing from font" in text:
            if not _glyphs_said:
                _glyphs_said = True
                print("pario: note: the plots' font cannot draw some characters of the titles or labels: "
                      "they show as empty boxes", file=sys.stderr)
        elif text not in said:  # matplotlib's own words, once, without its source line
            said.add(text)
            print(f"pario: note: matplotlib: {text}", file=sys.stderr)


def _wrapped(text, width, most):
    """Each line of a title wrapped to `width` characters, the whole cut
    to `most` lines ending in '...' where it was longer (the table and
    the report's caption carry it whole)."""
    lines = [part for line in text.split("\n") for part in (textwrap.wrap(line, width) or [""])]
    if len(lines) > most:
        lines = lines[:most]
        lines[-1] = textwrap.shorten(lines[-1] + " ...", width, placeholder=" ...")  # ends in '...' either way
    return "\n".join(lines)


class Palette:
    """A colour per series label, the same across the figures it serves."""

    def __init__(self):
        self.index = {}

    def style(self, label):
        """matplotlib keywords: the label's colour and marker."""
        import matplotlib

        if label not in self.index:
            self.index[label] = len(self.index)
        i = self.index[label]
        cycle = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        return dict(color=cycle[i % len(cycle)], marker=_MARKERS[i % len(_MARKERS)], label=label)


def figure_path(data, out_dir, run_id):
    return Path(out_dir) / f"run{run_id}-{data.figure.id}.png"


def check_figure_paths(figures, out_dir, run_id, store):
    """Refuse, before writing any, a figure name taken by a file pario did
    not write there (safefile's rule), so a refusal leaves no half set."""
    for data in figures:
        check_replaceable(figure_path(data, out_dir, run_id), store.figure_is_ours, "", _FIX)


def plot_figure(data, out_dir, run_id, palette=None, store=None):
    """The figure as a PNG file in out_dir (a directory the caller made or
    checked: safefile.make_directory), written through safefile and
    recorded in the store; returns its path.  Without a store it only
    creates a new name (nothing recorded, so nothing to replace)."""
    import matplotlib.pyplot as plt

    with missing_glyphs_as_one_note():
        f = draw_figure(data, palette)
        path = figure_path(data, out_dir, run_id)
        buf = io.BytesIO()
        f.savefig(buf, format="png")
        plt.close(f)
    digest = write_new_file(path, buf.getvalue(), option="",
                            may_replace=store.figure_is_ours if store else None, fix=_FIX)
    if store:
        store.figure_written(path, digest)
    return path


def draw_figure(data, palette=None):
    """The figure as a matplotlib Figure (the PNG files and the HTML
    report's SVG both come from here)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    palette = palette or Palette()
    for label in data.palette_order:
        palette.style(label)        # known values take their fixed places first
    fig, q = data.figure, data.quantity
    legend = len(data.series) > 1 or bool(data.series_labels.get(data.series[0])) or bool(data.curves)
    width = 8.4 if legend else 6.4  # wider by the legend's column
    f, ax = plt.subplots(figsize=(width, 4.4), dpi=110)
    category = data.x_param.scale == "category" or not all(
        isinstance(x, (int, float)) for x in data.xs)
    pos = {x: i for i, x in enumerate(data.xs)} if category else {x: x for x in data.xs}
    for s in data.series:
        xs = [x for x in data.xs if (x, s) in data.cells]
        best = [data.cells[(x, s)].best(q.better) for x in xs]
        label = data.series_labels[s] or q.label
        style = palette.style(label)
        if data.shows_spread:
            lo = [data.cells[(x, s)].worst(q.better) for x in xs]
            mid = [data.cells[(x, s)].median for x in xs]
            near = [min(a, b) for a, b in zip(lo, mid)]
            far = [max(a, b) for a, b in zip(lo, mid)]
            err = [[max(b - n, 0) for b, n in zip(best, near)], [max(fa - b, 0) for b, fa in zip(best, far)]]
            ax.errorbar([pos[x] for x in xs], best, yerr=err, capsize=3, **style)
        else:
            ax.plot([pos[x] for x in xs], best, **style)
        for x, y in zip(xs, best):  # a second quantity by each point (the load measured there)
            if (x, s) in data.annotations:
                ax.annotate(data.annotations[(x, s)], xy=(pos[x], y), xytext=(4, -10),
                            textcoords="offset points", fontsize="x-small", color=style["color"])
    for label, pts in data.curves:
        if category or not pts:
            continue
        xs, ys = zip(*pts)
        # one point (one rank count) draws no dotted line: mark it, so the
        # legend's 'ideal' and its 'peak' label name something drawn
        ax.plot(xs, ys, color="0.35", linestyle=":", linewidth=1.5, label=label, zorder=1,
                marker="_" if len(pts) == 1 else None, markersize=14)
        if len(pts) > 1:  # one point is no knee: the legend names the peak the curve would reach
            knee = max(pts, key=lambda p: (p[1], -p[0]))
            ax.annotate(f"peak {knee[1]:.0f}", xy=knee, xytext=(4, 4), textcoords="offset points",
                        fontsize="small", color="0.3")
    for y, text in fig.lines:
        ax.axhline(y, color="0.4", linestyle="--", linewidth=1)
        ax.annotate(text, xy=(0.99, y), xycoords=("axes fraction", "data"), fontsize="small",
                    color="0.3", va="bottom", ha="right")
    if category:
        ax.set_xticks(range(len(data.xs)))
        ax.set_xticklabels([data.x_labels[x] for x in data.xs])
    else:
        if data.x_param.scale == "log2" and min(data.xs) > 0:
            ax.set_xscale("log", base=2)
        ax.set_xticks(data.xs)
        ax.set_xticklabels([data.x_labels[x] for x in data.xs])
    ax.set_xlabel(data.x_param.label)
    # the quantity by name (a kind may leave its label empty: io's rate)
    ax.set_ylabel(f"{q.label or fig.y.replace('_', ' ')} ({data.unit + ', ' if data.unit else ''}"
                  f"{data.trials_text})")
    if fig.log_y:
        ax.set_yscale("log")
    elif all(c.best(q.better) >= 0 for c in data.cells.values()):
        ax.set_ylim(bottom=0)
    # the note (what ran: fsync, the file in memory) keeps lines of its own
    ax.set_title("\n".join(_wrapped(text, _TITLE_CHARS[width], most)
                           for text, most in ((data.heading, 3), (fig.note, 2)) if text),
                 fontsize="medium")
    ax.grid(True, alpha=0.3)
    if legend:
        # Outside the axes, to their right: a legend inside may sit on a
        # point (no placement inside can promise it never does).
        ax.legend(title=data.series_label or None, fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    f.tight_layout()  # makes room for the legend: the axes shrink, the legend stays whole
    return f
