"""`pario export RUN --csv|--json [--out FILE]`: every trial of every
point of a run, one row each, for analysis elsewhere.  Written to stdout,
or to a file: a new one, or one pario wrote itself (an earlier export to
the same --out, unchanged since: the results database records what pario
wrote, as for figures), never over anyone else's."""

import csv
import io
import json
import sys

from .runs import export_columns, iteration_rows
from .safefile import write_new_file  # noqa: F401  (report and export share it)


def export_text(store, run_id, fmt):
    # A run stopped before its first point has no row: its export is the
    # header alone (JSON: []), so a script exporting every run reads it as
    # it reads the others; export_command's note says why it is empty.
    kind, rows = iteration_rows(store, run_id)
    columns = export_columns(kind, rows)
    if fmt == "json":  # every row with every column (null where it has none), as the CSV
        return json.dumps([{c: r.get(c) for c in columns} for r in rows], indent=1) + "\n"
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def export_command(store, run_id, fmt, out_path=None, out=None):
    """`store` is opened writable when it can record an --out file (a
    read-only database records nothing: the file is written, but only
    once: Store.for_records)."""
    text = export_text(store, run_id, fmt)
    run = store.run(run_id)
    if run["status"] != "complete":  # the rows hold what it stored: say what it did not
        held = "the points it stored" if store.points(run_id) else "no row: it stored no point"
        print(f"pario: note: run {run_id} is {run['status']} ({store.points_text(run)}): its export holds "
              f"{held}", file=sys.stderr)
    if out_path:
        digest = write_new_file(out_path, text, may_replace=store.figure_is_ours,
                                fix="choose a new name or remove it")
        store.figure_written(out_path, digest)
        print(f"exported run {run_id} to {out_path}", file=sys.stderr)
        store.warn_unrecorded()
    else:
        (out or sys.stdout).write(text)
    return 0
