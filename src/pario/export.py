"""`pario export RUN --csv|--json [--out FILE]`: every trial of every
point of a run, one row each, for analysis elsewhere.  Written to stdout,
or to a new file (never over an existing one)."""

import csv
import io
import json
import os
import sys
from pathlib import Path

from .errors import UsageError
from .runs import iteration_rows


def write_new_file(path, text):
    """Create `path` (it must not exist) with `text`, atomically: a
    temporary file in the same directory renamed into place with link(2),
    which refuses an existing name, so a file pario did not create is never
    overwritten and a failed write leaves nothing."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.exists() or path.is_symlink():
        raise UsageError(f"--out {path} already exists: pario never overwrites a file; "
                         "choose a new name or remove it")
    if not parent.is_dir():
        raise UsageError(f"--out {path}: directory {parent} does not exist: create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--out {path}: directory {parent} is not writable: choose another")
    tmp = parent / f".{path.name}.pario-{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise UsageError(f"--out {path} appeared while writing: pario never overwrites a file; "
                             "choose a new name") from None
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write it ({exc.strerror}): choose another path") from exc
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def export_text(store, run_id, fmt):
    rows = iteration_rows(store, run_id)
    if not rows:
        raise UsageError(f"run {run_id} has no successful point to export: see 'pario show {run_id}'")
    if fmt == "json":
        return json.dumps(rows, indent=1) + "\n"
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def export_command(store, run_id, fmt, out_path=None, out=sys.stdout):
    text = export_text(store, run_id, fmt)
    if out_path:
        write_new_file(out_path, text)
        print(f"exported run {run_id} to {out_path}", file=sys.stderr)
    else:
        out.write(text)
    return 0
