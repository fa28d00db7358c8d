"""matplotlib figures as SVG bytes, for embedding in the report.

Text stays text (svg.fonttype none) and is never parsed as mathtext, so
a '$' in a user's title cannot break a figure."""

import io


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["text.parse_math"] = False
    plt.rcParams["svg.hashsalt"] = "pario"
    return plt


def svg_bytes(fig):
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()
