"""Results in one SQLite database.

Every point is written in its own transaction, so a killed run leaves a
readable database: the run row says 'running' until it ends, and `list`
shows a run whose process is gone as 'incomplete'.  Failed points are kept
as failures (with the engine's line), never as results.

pario writes with SQLite's rollback journal (NAME-journal, made and removed
by each transaction), never its write-ahead log: between two points nothing
of pario's lies beside the name, so a --db removed or replaced during a run
(db_moved) leaves no log there that SQLite would apply to the next file at
that name.  (A -wal beside a file is read as that file's, whoever wrote it.)
Reading never writes: a read-only connection creates no file beside the
database (_open_read_only).

Each run keeps its experiment: the study kind, the TOML text and where it
came from, with the options it ran with, so a run can be shown after its
file is gone.  The schema is versioned (PRAGMA user_version); an older
database is migrated in place when opened (columns are only added)."""

import functools
import json
import os
import socket
import sqlite3
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from .db_moved import DatabaseFailed, file_identity, moved_error
from .errors import UsageError
from .safefile import database_scratch
from .space import free_text

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

SCHEMA_VERSION = 3

# Columns added since the first schema (version 0/1), by table: an older
# database gets them on open; their rows keep NULL (show falls back to the
# shipped preset of the run's name).
_ADDED_COLUMNS = {
    "runs": [("kind", "TEXT"), ("experiment_toml", "TEXT"), ("experiment_origin", "TEXT"),
             ("planned_points", "INTEGER")],  # version 3: how many points the plan held
    "points": [("params_json", "TEXT")],
}


# PRAGMA application_id of a pario database ("pario" packed into 32 bits):
# how pario tells its own file from another application's SQLite file.
APPLICATION_ID = 0x50524F31  # "PRO1"
_OWN_TABLES = {"runs", "points", "phases", "warnings"}


def _with_added(row, table):
    """A row as a dict with every column added since the first schema, NULL
    where an older database read as it is (read-only) lacks it."""
    out = dict(row)
    for name, _ in _ADDED_COLUMNS[table]:
        out.setdefault(name, None)
    return out


def resolve_db(given):
    """(path, how messages name it) of the results database: --db as
    given, else $PARIO_DB, else the default file in the user's data
    directory.  A line about it names what the user set, not an option
    the user never gave."""
    if given is not None:
        return Path(given), "--db"
    if os.environ.get("PARIO_DB"):
        return Path(os.environ["PARIO_DB"]), "PARIO_DB"
    return default_db_path(), "the results database"


def default_db_path():
    """$PARIO_DB, else the user's data directory."""
    if os.environ.get("PARIO_DB"):
        return Path(os.environ["PARIO_DB"])
    return _users_db_path()


def _users_db_path():
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "pario" / "results.sqlite"


def add_db_option(parser, holding):
    """--db, as every subcommand that reads or stores runs takes it."""
    parser.add_argument("--db", default=None, help=f"results database holding {holding} "
                                                   f"(default: $PARIO_DB, else {_users_db_path()})")


def utc_now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _runs_pario(pid):
    """Whether process `pid`'s command line names pario (python -m pario,
    .venv/bin/pario): True where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"pario" in f.read()
    except OSError:
        return True


def _started_after(pid, started_utc):
    """Whether process `pid` started after a run it is said to run began
    (started_utc, whole seconds): the run's own process started before
    it, so a later one got its pid when that process was gone (killed,
    say, with kill -9).  False where /proc cannot tell."""
    from .watchdog import process_stat

    stat = process_stat(pid)
    try:
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        began = datetime.strptime(started_utc, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        ticks = int(stat[1][19]) if stat else None
    except (OSError, StopIteration, ValueError, IndexError, TypeError):
        return False
    if ticks is None:
        return False
    # btime is whole seconds too: a second of slack either way
    return boot + ticks / os.sysconf("SC_CLK_TCK") > began + 2


def _set_status(db, run_id, status):
    """A run's end, on connection `db` (the store's, or a copy's)."""
    db.execute("UPDATE runs SET status=?, finished_utc=? WHERE id=?", (status, utc_now(), run_id))


def _beside(path, suffix):
    """SQLite's file of `path` with `suffix` (-wal, -shm, -journal)."""
    return Path(path).with_name(Path(path).name + suffix)


def _in_wal_mode(path):
    """Whether the SQLite file at `path` says it is in WAL mode (header
    bytes 18 and 19, the read and write versions, are 2)."""
    try:
        with open(path, "rb") as f:
            return f.read(20)[18:20] == b"\x02\x02"
    except OSError:
        return False


def _open_read_only(path, immutable=False):
    """A read-only connection to `path` that creates no file beside it.
    A file in WAL mode with no -wal beside it has no log to read: it is
    opened immutable, because SQLite would otherwise make a -wal and -shm
    beside it (which a read-only connection then leaves there), and on a
    read-only mount could not open it at all."""
    path = Path(path).absolute()
    uri = f"file:{quote(str(path))}?mode=ro"
    if immutable or (_in_wal_mode(path) and not os.path.lexists(_beside(path, "-wal"))):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=30)


def _tables(path, immutable=False):
    """(application_id, table names) of the SQLite file at `path`."""
    probe = _open_read_only(path, immutable)
    try:
        app_id = probe.execute("PRAGMA application_id").fetchone()[0]
        return app_id, {r[0] for r in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        probe.close()


def _roll_back(path, label):
    """A pario database left mid-write (a process killed inside one of its
    transactions: a hot -journal beside it), which a read-only connection
    cannot read: SQLite's own recovery, done by the first connection that
    may write, puts the file back as its last transaction left it."""
    try:
        db = sqlite3.connect(str(path), timeout=30)
        try:
            db.execute("PRAGMA schema_version").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise UsageError(f"{label} {path} was left mid-write (a process killed while writing it: "
                         f"{Path(path).name}-journal beside it), and SQLite cannot roll it back here "
                         f"({exc}): open it once where it is writable, or restore it from a copy") from exc


def _unreadable(path, label, exc):
    """The one line for a database file SQLite cannot open for reading."""
    p = Path(path)
    if os.path.lexists(_beside(p, "-wal")) and not os.path.lexists(_beside(p, "-shm")) and \
            not os.access(p.parent, os.W_OK):
        return UsageError(f"{label} {p} has a write-ahead log ({p.name}-wal) but no {p.name}-shm, in "
                          f"a directory pario cannot write: SQLite cannot read it there ({exc}); copy "
                          f"{p.name} and {p.name}-wal to a writable directory and give that copy")
    return UsageError(f"{label} {p}: SQLite cannot open it ({exc}): check the file and its directory, "
                      "or choose another path")


def _refuse_foreign(path, label="--db"):
    """Refuse, before creating anything, a --db that is not pario's: a file
    that is not SQLite, or SQLite of another application.  Opened read-only
    so the check changes nothing, but for one thing: a pario database left
    mid-write is rolled back as SQLite does (_roll_back)."""
    left_mid_write = False
    try:
        try:
            app_id, tables = _tables(path)
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "") != "SQLITE_READONLY_ROLLBACK":
                raise
            app_id, tables = _tables(path, immutable=True)  # whose it is: page 1 and the schema
            left_mid_write = True
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_CANTOPEN":
            raise _unreadable(path, label, exc) from exc
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_NOTADB":
            raise _damaged(path, exc, label) from exc  # truncated or corrupted: damaged, either way
        raise UsageError(f"{label} {path} is not a pario results database ({exc}): pario will not "
                         "change it; choose another path") from exc
    _refuse_others(path, label, app_id, tables)
    if left_mid_write:
        _roll_back(path, label)


def _refuse_others(path, label, app_id, tables):
    """Refuse a file of another application (its id, its tables)."""
    if app_id == APPLICATION_ID or not tables:
        return
    if app_id == 0 and _OWN_TABLES <= tables:
        return  # written by a pario from before application_id
    raise UsageError(f"{label} {path} belongs to another application (tables: "
                     f"{', '.join(sorted(tables)[:5])}): pario will not add to it; choose another path")


def _refuse_stray_logs(p, label):
    """SQLite applies a -wal beside a file to that file, and rolls a
    -journal beside it back into it, whoever wrote them.  A -wal beside a
    file not in WAL mode, or either beside a name with no file yet, belongs
    to no database there (a file removed or replaced while another program
    wrote it): opened, it would rewrite the file at the name.  A -journal
    beside a file that has bytes but does not begin as SQLite's journals do
    (tester 11) is no journal of it either: SQLite deletes it on opening,
    even to read.  A writer's own journal, read while another run writes
    the database, begins with the magic number, or with zeros where SQLite
    writes it only once the pages behind it are synced, or is empty the
    moment after it was made.  pario did not make a foreign one, so it is
    neither used nor removed."""
    if p.exists():
        strays = [] if _in_wal_mode(p) else [_beside(p, "-wal")]
        journal = _beside(p, "-journal")
        if _foreign_journal(journal):
            raise UsageError(f"{journal} lies beside {label} {p} and is no SQLite journal: SQLite "
                             "would delete it on opening the database; pario will not open it, nor "
                             f"remove a file it did not make: move {journal.name} away, or choose "
                             "another path")
    else:
        strays = [_beside(p, "-wal"), _beside(p, "-journal")]
    for stray in strays:
        if os.path.lexists(stray):
            where = "a file not in WAL mode" if p.exists() else "a name with no database"
            raise UsageError(f"{stray} lies beside {label} {p}, {where}: it is no log of that "
                             "database, and SQLite would write it into the file at that name; pario "
                             f"will not open it, nor remove a file it did not make: move {stray.name} "
                             # a -shm goes with a WAL log only
                             + (f"(and {p.name}-shm) " if stray.name.endswith("-wal") else "")
                             + "away, or choose another path")


# The first bytes of every rollback journal SQLite writes (its file format,
# "the rollback journal": the header's magic number).
SQLITE_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _foreign_journal(path):
    """Whether something lies at `path` that no SQLite writer made: not a
    regular file, or one whose first bytes are neither SQLite's magic
    number nor the zeros a writer leaves there until it syncs."""
    if not os.path.lexists(path):
        return False
    try:
        if path.is_symlink() or not path.is_file():
            return True
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_JOURNAL_MAGIC))
    except OSError:
        return False  # unreadable: SQLite cannot read it either, and says so
    return any(head) and head != SQLITE_JOURNAL_MAGIC


def check_db_path(path, label="--db"):
    """One line for a --db that cannot be pario's database, before any
    work: a symlink, a directory, a path that is not text, another
    application's file, a stray log of SQLite beside it."""
    from .checks import path_text

    p = Path(path_text(label, path))
    try:
        if p.is_symlink():  # dangling or not: as --out and --json, never followed
            raise UsageError(f"{label} {p} is a symlink: pario neither follows a symlink to its "
                             "database nor creates one through it; give the real path")
        if p.is_dir():
            raise UsageError(f"{label} {p} is a directory: give a file name inside it")
        if not p.exists() and not p.parent.is_dir() and p != default_db_path():
            # Only the default database's folder is pario's to create.
            raise UsageError(f"{label} {p}: directory {p.parent} does not exist: create it or choose "
                             "another path")
        if p.exists() and not p.is_file():  # /dev/null, a pipe: no database, and not empty either
            raise UsageError(f"{label} {p} is not a regular file (a device, pipe or socket), so no pario "
                             "results database: choose a file path")
        if p.exists() and p.stat().st_size == 0:
            raise UsageError(f"{label} {p} is an empty file, not a pario results database: pario "
                             "will not change it; choose another path")
        _refuse_stray_logs(p, label)
        if p.exists():
            _refuse_foreign(p, label)
    except OSError as exc:
        raise UsageError(f"{label} {p}: {exc.strerror}: choose another path") from exc


def _unwritable(p, label):
    """One line when SQLite could not write the database at `p`: the file
    and its directory (where each transaction makes its -journal) must be
    writable.  (SQLite itself would open such a file read-only without a
    word, then fail at the first write of a run.)"""
    for where in (p, p.parent):
        if where.exists() and not os.access(where, os.W_OK):
            ro = os.statvfs(where).f_flag & os.ST_RDONLY
            what = "is on a read-only file system" if ro else \
                ("is not writable" if where == p else f"is in {p.parent}, a directory pario cannot write")
            return UsageError(f"{label} {p} {what}: pario cannot store there; choose a writable path "
                              "(reading commands such as 'pario list' still work)")
    return None


def _damaged(path, exc, label="--db"):
    """The one line for an SQLite error met while using a database: a
    damaged file is named as such (never a traceback, never written on), a
    full disk as such."""
    name = getattr(exc, "sqlite_errorname", "")
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or type(exc) is sqlite3.DatabaseError:
        return UsageError(f"{label} {path} is damaged ({exc}): pario will not write to it; restore it "
                          "from a copy or choose another --db")
    if name == "SQLITE_FULL":
        where = Path(path).parent
        return UsageError(f"{label} {path}: {exc} ({free_text(where)} free): free space on {where} "
                          "or choose another --db")
    return UsageError(f"{label} {path}: the results database failed ({exc}): check the file and its "
                      "file system, or choose another --db")


def _sqlite_errors_as_one_line(cls):
    """Every method of the store: an SQLite error becomes the one line of
    _damaged, so no command shows a traceback for a bad database file.
    During a run (after start_run) it is DatabaseFailed: points of the run
    may be stored already, so not the "nothing stored" of exit 2."""
    def guard(fn):
        @functools.wraps(fn)
        def guarded(self, *args, **kwargs):
            try:
                return fn(self, *args, **kwargs)
            except sqlite3.Error as exc:
                err = _damaged(getattr(self, "path", "?"), exc, getattr(self, "label", "--db"))
                run = getattr(self, "_run", None)
                if run is not None:  # what was stored before is there (a transaction per point)
                    raise DatabaseFailed(f"{err} (run {run}'s points stored before are kept in it: "
                                         f"see 'pario show {run}')") from exc
                raise err from exc
        return guarded
    for name, fn in list(vars(cls).items()):
        if callable(fn) and not isinstance(fn, (staticmethod, classmethod)) and \
                (not name.startswith("__") or name == "__init__"):
            setattr(cls, name, guard(fn))
    return cls


def check_whole(path, label="--db"):
    """PRAGMA quick_check through a read-only connection: a damaged page
    refused before a run writes anything (SQLite would otherwise say so
    only when a later query reaches that page, after the run)."""
    db = _open_read_only(path)
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        raise _damaged(path, exc, label) from exc
    finally:
        db.close()
    if [r[0] for r in rows] != ["ok"]:
        raise UsageError(f"{label} {path} is damaged (SQLite's check: {rows[0][0]}): pario will not "
                         "write to it; restore it from a copy or choose another --db")


def _refuse_newer(path, label):
    """A database a newer pario wrote (user_version above SCHEMA_VERSION)
    is refused before anything reads or writes it: its tables may mean
    what this pario does not know, and a run stored by this one would
    miss what the newer one reads."""
    db = _open_read_only(path)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()
    if version > SCHEMA_VERSION:
        raise UsageError(f"{label} {path} was written by a newer pario (schema {version}; this pario "
                         f"knows schema {SCHEMA_VERSION} and older): use that pario, or choose another --db")
    if version < 0:  # no pario writes one: the file was changed by hand
        raise UsageError(f"{label} {path} has schema version {version}, which no pario writes: restore it "
                         "from a copy, or choose another --db")


@_sqlite_errors_as_one_line
class Store:
    def __init__(self, path, create=True, readonly=False, label="--db"):
        """create=False (show, plot, ...): a missing database is an error.
        readonly=True (list, show, compare, export, report): opened with
        SQLite's mode=ro, so a reading command writes nothing to the file.
        A new database is built under a temporary name and linked into
        place, so the file at `path` is always a whole pario database and
        an existing file that is not one is refused, never written.
        `label` is how lines name it (resolve_db: --db, PARIO_DB)."""
        self.path = Path(path)
        self.readonly = readonly
        self.label = label
        self.unrecorded = []  # files written while read-only, not recorded (figure_written)
        self._pinned = self._run = None  # the file and the run being written (start_run)
        self._detached = False           # the run was saved beside a moved --db (_refuse_moved)
        self._created = None             # the file this Store made, if it did (remove_if_unused)
        check_db_path(self.path, label)
        if not create and not self.path.exists():
            raise UsageError(f"no results database at {self.path}: start with "
                             "'pario run cfs --quick --dir DIR', or name one with --db")
        if not readonly:
            unwritable = _unwritable(self.path, label)
            if unwritable:
                raise unwritable
            if self.path.exists():
                check_whole(self.path, label)  # before the first write (a run, a figure record)
        try:
            if create and not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._create_new()
                check_db_path(self.path, label)  # another pario may have linked its own first
                self._created = file_identity(self.path)
            self.db = self._connect(readonly)
        except sqlite3.DatabaseError as exc:
            if type(exc) is sqlite3.DatabaseError:
                raise _damaged(self.path, exc, label) from exc
            raise UsageError(f"{label} {self.path}: cannot open the results database ({exc}): "
                             "choose a writable path") from exc
        except (OSError, sqlite3.Error) as exc:
            # the system's words, not the scratch file's name the user never gave
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(f"{label} {self.path}: cannot open the results database ({why}): "
                             "choose a writable path") from exc
        self.db.row_factory = sqlite3.Row

    @classmethod
    def for_records(cls, path, label="--db"):
        """An existing database, opened to record the files a command writes
        (plot, export --out: see safefile): writable where SQLite can write
        it, else read-only, and the files are then written but not recorded
        (so never replaced later)."""
        from .checks import path_text

        path = Path(path_text(label, path))  # a name too long to stat: one line, before exists()
        return cls(path, create=False, readonly=path.exists() and _unwritable(path, label) is not None,
                   label=label)

    def _connect(self, readonly):
        if self.path.exists() and self._created is None:  # a file this Store did not just make
            _refuse_newer(self.path, self.label)
        if readonly:
            db = _open_read_only(self.path)
            # An older pario database is migrated (columns are only added),
            # unless it cannot be written (a read-only mount): then it is
            # read as it is, its missing columns read as NULL (_with_added).
            if (db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION
                    or _unwritable(self.path, self.label) is not None):
                return db
            db.close()
        db = sqlite3.connect(str(self.path), timeout=30)
        self.db = db
        self._prepare()
        return db

    def _create_new(self):
        """A complete, stamped database under a temporary name in the same
        directory, linked to self.path unless a file appeared there."""
        with database_scratch(self.path, ".pario-new") as tmp:
            self.db = sqlite3.connect(tmp, timeout=30)
            self._prepare()
            self.db.close()
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass

    def close(self):
        self.db.close()

    def _prepare(self):
        """The rollback journal (see the module's note: a database of an
        older pario, in WAL mode, is turned back, its log written into it),
        the tables, the migration and pario's stamp.  SQLite changes the
        journal mode only with no other connection open, and two runs that
        open one new database at once can meet its deadlock guard, which
        answers "locked" at once instead of waiting: try again."""
        deadline = time.monotonic() + 30
        while True:
            try:
                mode = self.db.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
                if mode != "delete":
                    raise sqlite3.OperationalError(f"database is locked (still in {mode} mode)")
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
                  kind=None, experiment_toml=None, experiment_origin=None, planned=None):
        """A new run, 'running', of `planned` points (how many of them never
        ran is then known if it stops early: points_text)."""
        self._pinned = file_identity(self.path)  # the file this run's points go to (db_moved)
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs(preset, title, started_utc, status, pid, host, dir, argv,"
                " options_json, launcher, pario_version, kind, experiment_toml, experiment_origin,"
                " planned_points) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (preset, title, utc_now(), "running", os.getpid(), socket.gethostname(),
                 str(directory), json.dumps(argv), json.dumps(options), launcher, version,
                 kind, experiment_toml, experiment_origin, planned))
        self._run = cur.lastrowid  # from here a failing database stops a run (DatabaseFailed)
        return self._run

    def finish_run(self, run_id):
        """The run is complete: said only in the file --db names (else the
        run is saved beside it, and said: _refuse_moved)."""
        self._refuse_moved(run_id)
        with self.db:
            _set_status(self.db, run_id, "complete")
        self._run = None

    def stop_run(self, run_id, keep_empty):
        """A run stopped before its end: marked incomplete.  One that stored
        no point is removed unless `keep_empty` (a stop the user asked for,
        a signal, which `list` and `show` then report): one stopped by an
        error (standard output gone, the database failing) before its first
        point would be an empty run the user never saw start.  A database
        that fails again here stays unsaid: the error that stopped the run
        is the one line, and a 'running' run of a process that is gone
        reads 'incomplete' anyway (_with_live_status)."""
        if self._detached:
            return  # saved beside the name, marked incomplete there
        self._refuse_moved(run_id)
        self._run = None
        try:
            with self.db:
                removed = not keep_empty and self.db.execute(
                    "DELETE FROM runs WHERE id=? AND NOT EXISTS (SELECT 1 FROM points WHERE run_id=?)",
                    (run_id, run_id)).rowcount
                if not removed:
                    _set_status(self.db, run_id, "incomplete")
            if removed:
                self.remove_if_unused()
        except (sqlite3.Error, OSError):
            pass

    def remove_if_unused(self):
        """The database this Store created for a run that then stored
        nothing (its first line could not be written, a signal came before
        the run was stored) goes too: no empty file the user never saw a
        run start in.  Only while it is still the file made here and
        nothing wrote to it (no run, no figure recorded), checked under
        SQLite's exclusive lock, which another pario waits on before it
        writes.  A database that was there before is never removed."""
        if self._created is None or self._detached:
            return
        try:
            self.db.execute("BEGIN EXCLUSIVE")
            try:
                used = self.db.execute("SELECT (SELECT count(*) FROM runs) + "
                                       "(SELECT count(*) FROM figure_files)").fetchone()[0]
                if not used and file_identity(self.path) == self._created:
                    self.path.unlink()
            finally:
                self.db.rollback()
        except (sqlite3.Error, OSError):
            pass  # kept: an empty database is harmless, the error that stopped the run is the line

    def _refuse_moved(self, run_id):
        """Raise DatabaseMoved when --db no longer names the file the run
        writes to (db_moved), its copy saved beside the name first.  The
        connection is closed then: nothing more goes to a file no name
        reaches, nor to a journal under a name that is no longer its file's."""
        if self._detached or self._pinned is None:
            return
        moved = moved_error(self.db, self.path, self.label, self._pinned, run_id,
                            lambda copy: _set_status(copy, run_id, "incomplete"))
        if moved:
            self.db.close()
            self._detached = True
            raise moved

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
        self._refuse_moved(run_id)  # a removed --db: stop now, not after every point
        return point_id

    def figure_written(self, path, digest):
        """Record a file pario wrote, a figure or an export (see safefile).
        A database opened read-only (for_records) records nothing: the
        file is pario's once, never replaced later, and warn_unrecorded
        says so."""
        if self.readonly:
            self.unrecorded.append(str(path))
            return
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO figure_files VALUES (?,?)",
                            (str(Path(path).absolute()), digest))

    def warn_unrecorded(self):
        """One line on stderr for the files written this command but not
        recorded (a read-only database), so a later export or plot refusing
        them as another program's comes as no surprise (tester 11)."""
        if not self.unrecorded:
            return
        n = len(self.unrecorded)
        what = self.unrecorded[0] if n == 1 else f"{n} files ({self.unrecorded[0]}, ...)"
        print(f"pario: warning: {self.label} {self.path} is read-only, so {what} "
              f"{'is' if n == 1 else 'are'} written but not recorded as pario's: a later run of this "
              f"command will not replace {'it' if n == 1 else 'them'}; make the database writable "
              "first for that", file=sys.stderr)

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
            into = f" --db {self.path}" if self.label == "--db" else ""  # PARIO_DB, the default: found again
            raise UsageError(f"{self.path} holds no runs yet: start one with 'pario run cfs --quick --dir DIR{into}'")
        return row[0]

    def points(self, run_id):
        rows = self.db.execute("SELECT * FROM points WHERE run_id=? ORDER BY id", (run_id,)).fetchall()
        return [_with_added(r, "points") for r in rows]

    def results_of_kind(self, kind):
        """(run id, result document) of every ok point of runs of a kind,
        newest first: how a run finds the probe of its target."""
        # A run stored before runs.kind (NULL there, or no such column in an
        # older database read as it is) is of the kind its preset is named
        # for: the preset `probe` is the only one of kind probe then.
        has_kind = any(c[1] == "kind" for c in self.db.execute("PRAGMA table_info(runs)"))
        of_kind = "(r.kind=? OR (r.kind IS NULL AND r.preset=?))" if has_kind else "r.preset=?"
        rows = self.db.execute(
            "SELECT p.run_id, p.result_json FROM points p JOIN runs r ON r.id = p.run_id"
            f" WHERE {of_kind} AND p.status='ok' AND p.result_json IS NOT NULL ORDER BY p.id DESC",
            (kind, kind) if has_kind else (kind,)).fetchall()
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

    def points_text(self, run):
        """'2 failed, 5 ok, 3 not run': a run's points as `list`, `show` and
        the report say them.  The planned points a stopped run never reached
        are 'not run' ('to run' while it runs); a run stored before pario
        kept its plan's size (schema 2) says only what it stored."""
        counts = self.counts(run["id"])
        parts = [f"{n} {s}" for s, n in sorted(counts.items())]
        left = (run.get("planned_points") or 0) - sum(counts.values())
        if left > 0 and run["status"] != "complete":
            parts.append(f"{left} {'to run' if run['status'] == 'running' else 'not run'}")
        return ", ".join(parts) or "none"

    @staticmethod
    def _with_live_status(row):
        """A 'running' run whose process is gone was killed: incomplete."""
        run = _with_added(row, "runs")
        if run["status"] == "running" and run["host"] == socket.gethostname():
            try:
                os.kill(run["pid"], 0)
            except ProcessLookupError:
                run["status"] = "incomplete"
            except PermissionError:
                pass
            else:
                if _started_after(run["pid"], run["started_utc"]) or not _runs_pario(run["pid"]):
                    run["status"] = "incomplete"  # its pid now another process's: the run was killed
        return run
