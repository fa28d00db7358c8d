"""Tables on the terminal through rich; the plain text tables when the
output is not a terminal (pipes, logs, CI), so scripts read stable text."""

from .figures import format_table, table_rows


def print_figure(data, lines, out):
    """A figure's table with the lines that explain it under it."""
    if not (hasattr(out, "isatty") and out.isatty()):
        print("\n" + format_table(data), file=out)
        for line in lines:
            print(f"  {line}", file=out)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    q = data.quantity
    what = f"{q.label} in {data.unit}" if q.label and data.unit else (data.unit or q.label)
    table = Table(title=f"{data.heading}: {what}, {data.trials_text}", title_justify="left")
    head, rows = table_rows(data)
    for i, h in enumerate(head):
        table.add_column(h, justify="left" if i == 0 else "right")
    for row in rows:
        cells = []
        for v in row:
            if isinstance(v, tuple):
                t = Text(v[0])
                t.append(" " + v[1], style="dim")
                cells.append(t)
            else:
                cells.append(Text(v))
        table.add_row(*cells)
    console = Console(file=out)
    console.print()
    console.print(table)
    for line in lines:
        console.print(f"  {line}", markup=False, highlight=False)
