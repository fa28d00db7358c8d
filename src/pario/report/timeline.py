"""The per-rank timeline of one phase, as the CFS report's Figure 2 draws
it: each rank's open, I/O, fsync and close on one clock, the wait in the
closing barrier, and the phase time (the slowest rank's stop) that the
rate is computed from.  It shows at a glance whether a slow phase is one
straggler, slow opens, or long fsyncs."""

from .svg import pyplot, svg_bytes

PARTS = (("open", "open_seconds", "#8c6bb1"), ("I/O", "io_seconds", "#2b8cbe"),
         ("fsync", "fsync_seconds", "#e6550d"), ("close", "close_seconds", "#31a354"))


def timeline_rows(iteration):
    """[(rank, [(part, start, length)...], barrier_wait_start, stop)], on a
    clock starting at the first rank's start."""
    ranks = iteration.get("ranks", [])
    if not ranks:
        return []
    t0 = min(r["start_seconds"] for r in ranks)
    rows = []
    for r in sorted(ranks, key=lambda r: r["rank"]):
        t = r["start_seconds"] - t0
        parts = []
        for name, key, _ in PARTS:
            d = max(r.get(key) or 0.0, 0.0)
            parts.append((name, t, d))
            t += d
        rows.append((r["rank"], parts, t, r["start_seconds"] - t0 + r["total_seconds"]))
    return rows


# Ranks a timeline draws at most: a bar per rank of thousands is neither
# readable nor cheap (4096 ranks made a 5 MB SVG in 40 s, tester 17).
MAX_DRAWN = 64
EDGE = 8  # of them, the ranks last and first to stop: the straggler and the quickest


def drawn_rows(rows):
    """(rows to draw, note): all of them up to MAX_DRAWN; beyond, the EDGE
    ranks last to stop (the phase time is the last one's), the EDGE first,
    and ranks evenly spread between, in rank order, with a note saying so."""
    if len(rows) <= MAX_DRAWN:
        return rows, ""
    by_stop = sorted(range(len(rows)), key=lambda i: rows[i][3])
    keep = set(by_stop[:EDGE] + by_stop[-EDGE:])
    spread = MAX_DRAWN - len(keep)
    step = len(rows) / spread
    for k in range(spread):
        i = int(k * step)
        while i in keep:  # the next rank not yet drawn
            i = (i + 1) % len(rows)
        keep.add(i)
    return ([rows[i] for i in sorted(keep)],
            f"{MAX_DRAWN} of {len(rows)} ranks: the {EDGE} last and {EDGE} first to stop, the rest evenly spread")


def timeline_figure(iteration, title):
    """The matplotlib figure of one iteration's per-rank timeline."""
    plt = pyplot()
    rows, note = drawn_rows(timeline_rows(iteration))
    if note:
        title = f"{title}\n({note})"
    n = len(rows)
    height = 1.2 + 0.28 * min(n, 64)
    fig, ax = plt.subplots(figsize=(7.2, height), dpi=100)
    colors = {name: c for name, _, c in PARTS}
    for y, (rank, parts, busy_end, stop) in enumerate(rows):
        for name, start, length in parts:
            if length > 0:
                ax.broken_barh([(start, length)], (y - 0.35, 0.7), facecolors=colors[name])
        if stop > busy_end:
            ax.broken_barh([(busy_end, stop - busy_end)], (y - 0.12, 0.24), facecolors="#cccccc")
    phase_end = max((stop for *_, stop in rows), default=0)
    ax.axvline(phase_end, color="black", linestyle="--", linewidth=1)
    ax.text(phase_end, n - 0.4, f" phase time {phase_end:.4f} s", va="bottom", ha="right",
            fontsize=8)
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"rank {r[0]}" for r in rows], fontsize=7 if n > 16 else 9)
    ax.invert_yaxis()
    ax.set_xlabel("seconds from the first rank's start")
    ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for _, _, c in PARTS]
    handles.append(plt.Rectangle((0, 0), 1, 1, color="#cccccc"))
    # the legend is the figure's, in a strip kept free below the axes and
    # their label (an axes-relative anchor landed on the label for few ranks)
    strip = 0.3 / height
    fig.legend(handles, [p[0] for p in PARTS] + ["barrier wait"], fontsize=7, ncol=5,
               loc="lower center", bbox_to_anchor=(0.5, 0.0), frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout(rect=(0, strip, 1, 1))
    return fig


def timeline_svg(iteration, title):
    """SVG bytes of one iteration's per-rank timeline."""
    return svg_bytes(timeline_figure(iteration, title))
