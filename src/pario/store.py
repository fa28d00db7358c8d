"""Results in one SQLite database.

Every point is written in its own transaction, so a killed run leaves a
readable database: the run row says 'running' until it ends, and `list`
shows a run whose process is gone as 'incomplete'.  Failed points are kept
as failures (with the engine's line), never as results.

Each run keeps its experiment: the study kind, the TOML text and where it
came from, with the options it ran with, so a run can be shown after its
file is gone.  The schema is versioned (PRAGMA user_version); an older
database is migrated in place when opened (columns are only added)."""

import functools
import json
import os
import socket
import sqlite3
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from .db_moved import file_identity, refuse_moved
from .errors import UsageError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    preset TEXT NOT NULL,
    title TEXT,
    started_utc TEXT NOT NULL,
    finished_utc TEXT,
    status TEXT NOT NULL,          -- running | complete | incomplete
    pid INTEGER,
    host TEXT,
    dir TEXT,
    argv TEXT,
    options_json TEXT,
    launcher TEXT,
    pario_version TEXT
);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    test_id TEXT NOT NULL,
    title TEXT,
    layout TEXT,
    files TEXT,
    api TEXT,
    ranks INTEGER,
    block_bytes INTEGER,
    size_bytes INTEGER,
    group_size INTEGER,
    status TEXT NOT NULL,          -- ok | failed
    error TEXT,
    command TEXT,
    seconds REAL,
    result_json TEXT
);
CREATE TABLE IF NOT EXISTS phases (
    point_id INTEGER NOT NULL REFERENCES points(id),
    phase TEXT NOT NULL,
    iteration INTEGER NOT NULL,
    seconds REAL,
    bytes INTEGER,
    mib_per_s REAL,
    cache_fraction REAL
);
CREATE TABLE IF NOT EXISTS warnings (
    point_id INTEGER NOT NULL REFERENCES points(id),
    text TEXT NOT NULL
);
-- Every file pario wrote for the user (figures, exports): the only files
-- it may later replace (re-plotting a run, exporting again), and only
-- while their content is unchanged.
CREATE TABLE IF NOT EXISTS figure_files (
    path TEXT PRIMARY KEY,         -- absolute
    sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS points_by_run ON points(run_id);
CREATE INDEX IF NOT EXISTS phases_by_point ON phases(point_id);
"""

SCHEMA_VERSION = 2

# Columns added since the first schema (version 0/1), by table: an older
# database gets them on open; their rows keep NULL (show falls back to the
# shipped preset of the run's name).
_ADDED_COLUMNS = {
    "runs": [("kind", "TEXT"), ("experiment_toml", "TEXT"), ("experiment_origin", "TEXT")],
    "points": [("params_json", "TEXT")],
}


# PRAGMA application_id of a pario database ("pario" packed into 32 bits):
# how pario tells its own file from another application's SQLite file.
APPLICATION_ID = 0x50524F31  # "PRO1"
_OWN_TABLES = {"runs", "points", "phases", "warnings"}


def _refuse_foreign(path):
    """Refuse, before creating anything, a --db that is not pario's: a file
    that is not SQLite, or SQLite of another application.  Opened read-only
    so the check changes nothing."""
    try:
        probe = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            app_id = probe.execute("PRAGMA application_id").fetchone()[0]
            tables = {r[0] for r in probe.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            probe.close()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--db {path} is not a pario results database ({exc}): pario will not "
                         "change it; choose another path") from exc
    if app_id == APPLICATION_ID or not tables:
        return
    if app_id == 0 and _OWN_TABLES <= tables:
        return  # written by a pario from before application_id
    raise UsageError(f"--db {path} belongs to another application (tables: "
                     f"{', '.join(sorted(tables)[:5])}): pario will not add to it; choose another path")


def default_db_path():
    """$PARIO_DB, else the user's data directory."""
    if os.environ.get("PARIO_DB"):
        return Path(os.environ["PARIO_DB"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "pario" / "results.sqlite"


def utc_now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_db_path(path):
    """One line for a --db that cannot be pario's database, before any
    work: a symlink, a directory, a path that is not text, another
    application's file."""
    from .checks import path_text

    p = Path(path_text("--db", path))
    try:
        if p.is_symlink():  # dangling or not: as --out and --json, never followed
            raise UsageError(f"--db {p} is a symlink: pario neither follows a symlink to its "
                             "database nor creates one through it; give the real path")
        if p.is_dir():
            raise UsageError(f"--db {p} is a directory: give a file name inside it")
        if not p.exists() and not p.parent.is_dir() and p != default_db_path():
            # Only the default database's folder is pario's to create.
            raise UsageError(f"--db {p}: directory {p.parent} does not exist: create it or choose "
                             "another path")
        if p.exists() and p.stat().st_size == 0:
            raise UsageError(f"--db {p} is an empty file, not a pario results database: pario "
                             "will not change it; choose another path")
        if p.exists():
            _refuse_foreign(p)
    except OSError as exc:
        raise UsageError(f"--db {p}: {exc.strerror}: choose another path") from exc


def _damaged(path, exc):
    """The one line for an SQLite error met while using a database: a
    damaged file is named as such (never a traceback, never written on)."""
    if getattr(exc, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or \
            type(exc) is sqlite3.DatabaseError:
        return UsageError(f"--db {path} is damaged ({exc}): pario will not write to it; restore it "
                          "from a copy or choose another --db")
    return UsageError(f"--db {path}: the results database failed ({exc}): check the file and its "
                      "file system, or choose another --db")


def _sqlite_errors_as_one_line(cls):
    """Every method of the store: an SQLite error becomes the one line of
    _damaged, so no command shows a traceback for a bad database file."""
    def guard(fn):
        @functools.wraps(fn)
        def guarded(self, *args, **kwargs):
            try:
                return fn(self, *args, **kwargs)
            except sqlite3.Error as exc:
                if getattr(self, "db", None) is not None:
                    self.db.close()  # unusable now; closing also removes SQLite's -wal, -shm
                raise _damaged(getattr(self, "path", "?"), exc) from exc
        return guarded
    for name, fn in list(vars(cls).items()):
        if callable(fn) and not isinstance(fn, (staticmethod, classmethod)) and \
                (not name.startswith("__") or name == "__init__"):
            setattr(cls, name, guard(fn))
    return cls


def check_whole(path):
    """PRAGMA quick_check through a read-only connection: a damaged page
    refused before a run writes anything (SQLite would otherwise say so
    only when a later query reaches that page, after the run)."""
    db = sqlite3.connect(f"file:{quote(str(Path(path).absolute()))}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        raise _damaged(path, exc) from exc
    finally:
        db.close()
    if [r[0] for r in rows] != ["ok"]:
        raise UsageError(f"--db {path} is damaged (SQLite's check: {rows[0][0]}): pario will not "
                         "write to it; restore it from a copy or choose another --db")


@_sqlite_errors_as_one_line
class Store:
    def __init__(self, path, create=True, readonly=False):
        """create=False (show, plot, ...): a missing database is an error.
        readonly=True (list, show, compare, export, report): opened with
        SQLite's mode=ro, so a reading command writes nothing to the file.
        A new database is built under a temporary name and linked into
        place, so the file at `path` is always a whole pario database and
        an existing file that is not one is refused, never written."""
        self.path = Path(path)
        self.readonly = readonly
        check_db_path(self.path)
        if not create and not self.path.exists():
            raise UsageError(f"no results database at {self.path}: start with "
                             "'pario run cfs --quick --dir DIR', or name one with --db")
        if not readonly and self.path.exists():
            check_whole(self.path)  # before the first write (a run, a figure record)
        try:
            if create and not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._create_new()
                check_db_path(self.path)  # another pario may have linked its own first
            self.db = self._connect(readonly)
        except sqlite3.DatabaseError as exc:
            if type(exc) is sqlite3.DatabaseError:
                raise _damaged(self.path, exc) from exc
            raise UsageError(f"--db {self.path}: cannot open the results database ({exc}): "
                             "choose a writable path") from exc
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"--db {self.path}: cannot open the results database ({exc}): "
                             "choose a writable path") from exc
        self.db.row_factory = sqlite3.Row

    def _connect(self, readonly):
        if readonly:
            db = sqlite3.connect(f"file:{quote(str(self.path.absolute()))}?mode=ro", uri=True,
                                 timeout=30)
            if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
                return db
            db.close()  # an older pario database: migrate it (columns are only added)
        db = sqlite3.connect(str(self.path), timeout=30)
        self.db = db
        self._prepare()
        return db

    def _create_new(self):
        """A complete, stamped database under a temporary name in the same
        directory, linked to self.path unless a file appeared there."""
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".pario-new",
                                   dir=self.path.parent)
        os.close(fd)
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            self.db = sqlite3.connect(tmp, timeout=30)
            self._prepare()
            self.db.close()
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass
        finally:
            for name in (tmp, tmp + "-wal", tmp + "-shm"):
                try:
                    os.unlink(name)
                except FileNotFoundError:
                    pass

    def close(self):
        self.db.close()

    def _prepare(self):
        """WAL, the tables, the migration and pario's stamp.  Two runs that
        open one new database at once can meet SQLite's deadlock guard,
        which answers "locked" at once instead of waiting: try again."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                # Tables and stamp in one transaction: another pario checking
                # the file sees none of them or all of them, never half.
                self.db.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\n"
                                      f"PRAGMA application_id={APPLICATION_ID};\nCOMMIT;")
                self._migrate()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                if self.db.in_transaction:
                    self.db.rollback()
                time.sleep(0.05)

    def _migrate(self):
        if self.db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return
        # Two pario runs may open one new database at once: take the write
        # lock first, then look again, so only one of them adds the columns.
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self.db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                for table, cols in _ADDED_COLUMNS.items():
                    have = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
                    for name, sql_type in cols:
                        if name not in have:
                            self.db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    # --- writing -----------------------------------------------------------
    def start_run(self, preset, title, directory, argv, options, launcher, version,
                  kind=None, experiment_toml=None, experiment_origin=None):
        self._pinned = file_identity(self.path)  # the file this run's points go to (db_moved)
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs(preset, title, started_utc, status, pid, host, dir, argv,"
                " options_json, launcher, pario_version, kind, experiment_toml, experiment_origin)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (preset, title, utc_now(), "running", os.getpid(), socket.gethostname(),
                 str(directory), json.dumps(argv), json.dumps(options), launcher, version,
                 kind, experiment_toml, experiment_origin))
        return cur.lastrowid

    def finish_run(self, run_id, status):
        if status == "complete":  # only in the file --db names: else saved beside it, said
            refuse_moved(self, self._pinned, run_id)
        with self.db:
            self.db.execute("UPDATE runs SET status=?, finished_utc=? WHERE id=?",
                            (status, utc_now(), run_id))

    def add_point(self, run_id, point, status, command, seconds, result=None, error=None):
        """One point, with its phases and warnings, in one transaction.
        `point` offers test_id, ranks, columns() and params() (see studies)."""
        c = point.columns()
        with self.db:
            cur = self.db.execute(
                "INSERT INTO points(run_id, test_id, title, layout, files, api, ranks,"
                " block_bytes, size_bytes, group_size, status, error, command, seconds,"
                " result_json, params_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, point.test_id, c.get("title"), c.get("layout"), c.get("files"), c.get("api"),
                 point.ranks, c.get("block_bytes"), c.get("size_bytes"), c.get("group_size"), status,
                 error, json.dumps(command), seconds, json.dumps(result) if result else None,
                 json.dumps(point.params())))
            point_id = cur.lastrowid
            if result:
                for phase in result.get("phases", []):
                    for it in phase["iterations"]:
                        self.db.execute(
                            "INSERT INTO phases VALUES (?,?,?,?,?,?,?)",
                            (point_id, phase["name"], it["iteration"], it["seconds"],
                             it["bytes"], it["mib_per_s"], it.get("cache_resident_fraction")))
                for text in result.get("warnings", []):
                    self.db.execute("INSERT INTO warnings VALUES (?,?)", (point_id, text))
        refuse_moved(self, self._pinned, run_id)  # a removed --db: stop now, not after every point
        return point_id

    def figure_written(self, path, digest):
        """Record a file pario wrote, a figure or an export (see safefile)."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO figure_files VALUES (?,?)",
                            (str(Path(path).absolute()), digest))

    def figure_is_ours(self, path, digest):
        """Whether pario wrote this very file at this path, unchanged since:
        `digest` is safefile's fingerprint (inode and bytes)."""
        row = self.db.execute("SELECT sha256 FROM figure_files WHERE path=?",
                              (str(Path(path).absolute()),)).fetchone()
        return row is not None and row[0] == digest

    # --- reading -----------------------------------------------------------
    def runs(self):
        rows = self.db.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [self._with_live_status(r) for r in rows]

    def run(self, run_id):
        row = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise UsageError(f"run {run_id} is not in {self.path}: see 'pario list'")
        return self._with_live_status(row)

    def latest_run_id(self):
        row = self.db.execute("SELECT max(id) FROM runs").fetchone()
        if row[0] is None:
            raise UsageError(f"{self.path} holds no runs yet: start one with 'pario run cfs --quick'")
        return row[0]

    def points(self, run_id):
        return self.db.execute("SELECT * FROM points WHERE run_id=? ORDER BY id", (run_id,)).fetchall()

    def results_of_kind(self, kind):
        """(run id, result document) of every ok point of runs of a kind,
        newest first: how a run finds the probe of its target."""
        rows = self.db.execute(
            "SELECT p.run_id, p.result_json FROM points p JOIN runs r ON r.id = p.run_id"
            " WHERE r.kind=? AND p.status='ok' AND p.result_json IS NOT NULL ORDER BY p.id DESC",
            (kind,)).fetchall()
        return [(r[0], json.loads(r[1])) for r in rows]

    def warnings(self, run_id):
        rows = self.db.execute(
            "SELECT p.test_id, w.text FROM warnings w JOIN points p ON p.id = w.point_id"
            " WHERE p.run_id=?", (run_id,)).fetchall()
        return [(r[0], r[1]) for r in rows]

    def counts(self, run_id):
        rows = self.db.execute("SELECT status, count(*) FROM points WHERE run_id=? GROUP BY status",
                               (run_id,)).fetchall()
        return {r[0]: r[1] for r in rows}

    @staticmethod
    def _with_live_status(row):
        """A 'running' run whose process is gone was killed: incomplete."""
        run = dict(row)
        if run["status"] == "running" and run["host"] == socket.gethostname():
            try:
                os.kill(run["pid"], 0)
            except ProcessLookupError:
                run["status"] = "incomplete"
            except PermissionError:
                pass
        return run
