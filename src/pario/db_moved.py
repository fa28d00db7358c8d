"""Whether --db still names the database a run writes into.

SQLite goes on writing to a database file that another process removed or
renamed, or replaced by a new file under the name: the run "completes",
says its results are in --db, and every point is in a file no name
reaches.  So a writing Store keeps the file's identity (st_dev, st_ino)
when a run starts and looks again after each point and before the run
ends.  When the name no longer holds that file, the open database is
copied to a new file beside the name (never over anything: built under a
temporary name of pario's own, the run marked incomplete in it, then
linked into place), and the run stops with one line saying where it is.
Nothing is written through the name after that: the file there now is not
pario's (and pario's journal never lies beside it: see store)."""

import os
import sqlite3
from pathlib import Path

from .errors import UsageError
from .safefile import database_scratch

# `pario run` / `pario model` exit status when the results database failed
# the run after it started: --db removed or replaced, a write refused (a
# full disk).  Points stored before are kept (the README's exit codes).
EXIT_DB_FAILED = 5


class DatabaseFailed(UsageError):
    """The results database failed a run that had started: the one line
    names why (and the run's points so far are kept)."""
    exit_code = EXIT_DB_FAILED


class DatabaseMoved(DatabaseFailed):
    """--db no longer names the open database; the message says where the
    run was saved, or that it is lost and why."""


def file_identity(path):
    """(st_dev, st_ino) of the file `path` names, None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _unreachable(path):
    """Why the name cannot be looked at now, when it is not that it is
    gone (a network file system that stopped answering: ENOTCONN, EIO),
    else ''."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""


def what_happened(pinned, path):
    """'removed' or 'replaced by another file' when `path` no longer names
    the file of identity `pinned`, else ''."""
    now = file_identity(path)
    if now == pinned:
        return ""
    return "removed" if now is None else "replaced by another file"


def save_beside(db, path, run_id, mark):
    """Copy the open database `db` (the file no name reaches) to a new file
    beside `path`, <stem>.run<N>-saved[-k]<suffix>, after `mark(connection)`
    on the copy.  Returns the new path; raises OSError or sqlite3.Error if
    it cannot."""
    path = Path(path)
    with database_scratch(path, ".pario-saved") as tmp:
        db.execute("VACUUM INTO ?", (tmp,))  # into pario's own empty file
        copy = sqlite3.connect(tmp)
        try:
            with copy:
                mark(copy)
        finally:
            copy.close()
        for k in range(1, 1000):
            name = path.with_name(f"{path.stem}.run{run_id}-saved{'' if k == 1 else f'-{k}'}{path.suffix}")
            try:
                os.link(tmp, name)  # never over a file that is there
                return name
            except FileExistsError:
                continue
        raise FileExistsError(f"every name {path.stem}.run{run_id}-saved-K{path.suffix} is taken")


def moved_error(db, path, label, pinned, run_id, mark_incomplete):
    """DatabaseMoved if `path` no longer names the file pinned when the run
    started, after saving `db` beside the name (its run marked incomplete
    there); DatabaseFailed if the name cannot be looked at (its file system
    stopped answering: nothing to save, nothing lost); None while the name
    still holds it."""
    happened = what_happened(pinned, path)
    if not happened:
        return None
    why = _unreachable(path)
    if why:  # nothing moved: the file is there, out of reach, and its points with it
        return DatabaseFailed(f"{label} {path} stopped answering during run {run_id} ({why}): the points "
                              f"stored so far stay in it; see them with 'pario show {run_id}' once its "
                              "file system answers again")
    try:
        saved = save_beside(db, path, run_id, mark_incomplete)
        where = (f"the database with run {run_id}'s points so far (marked incomplete) is saved "
                 f"in {saved}, a new file")
    except (OSError, sqlite3.Error) as exc:
        where = f"run {run_id} is lost (it could not be saved beside it: {exc})"
    return DatabaseMoved(f"{label} {path} was {happened} during run {run_id}: {where}; "
                         "keep other processes off the database while a run writes to it")
