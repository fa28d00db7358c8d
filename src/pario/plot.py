"""PNG figures like the CFS report's Figures 4-14: aggregate rate against
ranks on a log2 axis, one line per block size."""

from pathlib import Path

from .units import format_size


def plot_figure(fig, out_dir, run_id):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    f, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
    markers = "os^vD<>ph*"
    for i, block in enumerate(fig.blocks):
        xs = [r for r in fig.ranks if (r, block) in fig.best]
        ys = [fig.best[(r, block)] for r in xs]
        ax.plot(xs, ys, marker=markers[i % len(markers)], label=format_size(block))
    ax.set_xscale("log", base=2)
    ax.set_xticks(fig.ranks)
    ax.set_xticklabels([str(r) for r in fig.ranks])
    ax.set_xlabel("ranks")
    ax.set_ylabel(f"MiB/s (best of {fig.iterations})")
    ax.set_ylim(bottom=0)
    ax.set_title(fig.heading)
    ax.grid(True, alpha=0.3)
    ax.legend(title="block", fontsize="small")
    f.tight_layout()
    path = out_dir / f"run{run_id}-{fig.name}.png"
    f.savefig(path)
    plt.close(f)
    return path
