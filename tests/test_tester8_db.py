"""Tester 8's database items, each through the real CLI: a --db removed or
replaced during a run leaves no journal of pario's beside the name, so the
file there is never rewritten and the saved copy can be moved back (1); a
full disk is named as such, with the exit of a run the database stopped,
and a run that stored nothing is not kept (7); a pario database on a
read-only mount can be read, a truncated one is "damaged" like a corrupted
one (14); `pario model` with an output it cannot write stores nothing (15);
SIGTERM stops `pario model` as it stops `pario run`, and a Ctrl-C while
Python imports pario is one line (16); `list` of a missing database and
the name PARIO_DB (17; another application's WAL file left as it was:
test_front_end_faults)."""

import hashlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, wait_for
from test_front_end import pario, pario_background
from test_tester7_plan import _stored_points

BIG_MODEL = ["model", "cfs", "--machine", "ipsc860", "--ranks", "1,2,4,8,16", "--blocks", "1m,64k"]
SMALL_MODEL = ["model", "cfs", "--quick", "--tests", "partitioned", "--machine", "ipsc860"]
SQLITE_FILES = ("-wal", "-shm", "-journal")


def _pario_into(stdout, *args, db):
    """pario(...) with its standard output sent to `stdout` (a file, a fd)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env, timeout=600)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _beside(db):
    """SQLite's files beside the name `db` that exist."""
    return [db.name + s for s in SQLITE_FILES if os.path.lexists(db.with_name(db.name + s))]


def _runs(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT id, status, (SELECT count(*) FROM points WHERE run_id=runs.id) "
                           "FROM runs ORDER BY id").fetchall()
    finally:
        con.close()


def _model_until_a_point(db, then):
    """A long `pario model` into `db`; `then()` once a point is stored;
    returns (returncode, stderr)."""
    proc = pario_background(*BIG_MODEL, "--db", db, db=db)
    try:
        assert wait_for(lambda: _stored_points(db) >= 1, 120), "no point stored"
        then()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def test_a_database_replaced_during_a_run_is_never_rewritten_and_the_saved_copy_moves_back(tmp_path):
    """Item 1: pario's -wal stayed under the name; the next open replayed it
    over the user's replacement (a list showed pario's run, a write made it
    for good), and the saved copy moved into place read as damaged."""
    db, user = tmp_path / "rq.sqlite", tmp_path / "user.sqlite"
    assert pario(*SMALL_MODEL, "--db", user, db=user).returncode == 0
    assert pario(*SMALL_MODEL, "--db", user, db=user).returncode == 0
    before = _sha(user)
    code, err = _model_until_a_point(db, lambda: os.replace(user, db))
    saved = tmp_path / "rq.run1-saved.sqlite"
    assert code == 5 and f"--db {db} was replaced by another file during run 1" in err, err
    assert _beside(db) == [], "pario left a journal under a name that is not its file's"
    listed = pario("list", "--db", db, db=db)
    assert listed.returncode == 0 and [l.split()[:3] for l in listed.stdout.splitlines()[1:]] == \
        [["1", "cfs", "complete"], ["2", "cfs", "complete"]], listed.stdout  # the user's runs
    assert _sha(db) == before, "the user's file was changed"
    # the recovery the tester tried: the saved copy moved into place
    os.replace(db, user)
    os.replace(saved, db)
    status = _runs(db)
    assert len(status) == 1 and status[0][:2] == (1, "incomplete") and status[0][2] >= 1, status
    again = pario(*SMALL_MODEL, "--db", db, db=db)
    assert again.returncode == 0, again.stderr
    assert [r[:2] for r in _runs(db)] == [(1, "incomplete"), (2, "complete")]
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert _beside(db) == [] and _sha(user) == before


def test_a_database_removed_during_a_run_leaves_nothing_a_new_database_takes_in(tmp_path):
    """Item 1, removed: the new database at the name held the removed run
    again (its stale -wal), or was called malformed."""
    db = tmp_path / "rm.sqlite"
    code, err = _model_until_a_point(db, db.unlink)
    assert code == 5 and f"--db {db} was removed during run 1" in err, err
    assert _beside(db) == [] and not db.exists()
    again = pario(*SMALL_MODEL, "--db", db, db=db)
    assert again.returncode == 0, again.stderr
    assert _runs(db) == [(1, "complete", 9)]  # its own run, nothing of the removed one


@pytest.mark.parametrize("exists", [True, False])
def test_a_log_beside_the_name_that_is_not_the_files_is_refused_and_left(tmp_path, exists):
    """Item 1: a -wal left by an earlier pario (or anyone) would be written
    into the file at the name: refused, not used, not removed."""
    db = tmp_path / "r.sqlite"
    if exists:
        assert pario(*SMALL_MODEL, "--db", db, db=db).returncode == 0
    wal = tmp_path / "r.sqlite-wal"
    wal.write_bytes(b"a log of some other file")
    before = _sha(db) if exists else None
    for args in (SMALL_MODEL, ["list"]):
        r = pario(*args, "--db", db, db=db)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert lines[0].startswith(f"pario: error: {wal} lies beside --db {db}, ") and \
            "move r.sqlite-wal (and r.sqlite-shm) away" in lines[0], lines[0]
    assert wal.read_bytes() == b"a log of some other file"
    assert (_sha(db) == before) if exists else not db.exists()


def test_a_database_left_mid_write_is_rolled_back_and_read(tmp_path):
    """Item 1's journal, the other way: a process killed inside a point's
    transaction leaves a hot -journal, which a read-only connection cannot
    roll back ("attempt to write a readonly database" in every command)."""
    db = tmp_path / "r.sqlite"
    assert pario(*SMALL_MODEL, "--db", db, db=db).returncode == 0
    committed = list(sqlite3.connect(db).iterdump())
    killed = subprocess.run([sys.executable, "-c", (
        "import os, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1])\n"
        "con.execute('PRAGMA cache_size=1')\n"  # pages reach the file before the commit
        "con.execute('UPDATE points SET error=hex(randomblob(3000))')\n"
        "os._exit(9)\n"), str(db)])
    assert killed.returncode == 9 and _beside(db) == ["r.sqlite-journal"]
    listed = pario("list", "--db", db, db=db)
    assert listed.returncode == 0 and "1  cfs     complete" in listed.stdout, listed.stderr
    assert _beside(db) == [] and list(sqlite3.connect(db).iterdump()) == committed


def test_a_full_disk_is_named_and_a_run_it_stops_keeps_its_points(small_tmpfs, tmp_path):
    """Item 7: "Cannot operate on a closed database" and exit 2 ("nothing
    stored") for a run that had stored 36 points; a model on a full disk
    kept an empty incomplete run."""
    full = small_tmpfs("2m")
    db = full / "db.sqlite"
    assert pario(*SMALL_MODEL, "--db", db, "--out", tmp_path / "p1", db=db).returncode == 0
    free = os.statvfs(full).f_bavail * os.statvfs(full).f_frsize
    (full / "fill").write_bytes(b"\0" * (free - 150 * 1024))  # room for a few points, not 81
    r = pario("model", "cfs", "--quick", "--machine", "ipsc860", "--db", db, "--out", tmp_path / "p2", db=db)
    lines = [l for l in r.stderr.splitlines() if l.startswith("pario:")]
    assert r.returncode == 5 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"pario: error: --db {db}: database or disk is full (") and \
        lines[0].endswith(f"free): free space on {full} or choose another --db (run 2's points stored "
                          "before are kept in it: see 'pario show 2')"), lines[0]
    runs = _runs(db)
    assert runs[0] == (1, "complete", 9) and runs[1][:2] == (2, "incomplete") and 0 < runs[1][2] < 81, runs
    # the disk full to the last byte: the model stores nothing, said as such
    free = os.statvfs(full).f_bavail * os.statvfs(full).f_frsize
    (full / "fill2").write_bytes(b"\0" * free)
    r = pario(*SMALL_MODEL, "--db", db, "--out", tmp_path / "p3", db=db)
    assert r.returncode in (2, 5) and "database or disk is full" in r.stderr, r.stderr
    assert _runs(db) == runs and _beside(db) == []


def _legacy_wal_copy(db, into):
    """A copy of pario database `db` as an older pario left it: in WAL mode,
    its -wal gone (closed cleanly)."""
    copy = into / "legacy.sqlite"
    con = sqlite3.connect(copy)
    sqlite3.connect(db).backup(con)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.close()
    assert _beside(copy) == []
    return copy


def test_a_database_on_a_read_only_mount_is_read_and_a_run_into_it_says_why_not(small_tmpfs, tmp_path):
    """Item 14: a WAL database with no -shm on a read-only mount was "not a
    pario results database (unable to open database file)" in every command."""
    db = tmp_path / "r.sqlite"
    assert pario(*SMALL_MODEL, "--db", db, db=db).returncode == 0
    ro = small_tmpfs("4m")
    legacy = _legacy_wal_copy(db, ro)
    new = ro / "new.sqlite"
    new.write_bytes(db.read_bytes())
    assert subprocess.run(["mount", "-o", "remount,ro", str(ro)]).returncode == 0
    for copy in (legacy, new):
        listed = pario("list", "--db", copy, db=copy)
        assert listed.returncode == 0 and "1  cfs     complete" in listed.stdout, listed.stderr
        shown = pario("show", "1", "--db", copy, db=copy)
        assert shown.returncode == 0 and "Partitioned Write" in shown.stdout, shown.stderr
        csv = pario("export", "1", "--csv", "--db", copy, db=copy)
        assert csv.returncode == 0 and len(csv.stdout.splitlines()) == 1 + 9 * 2, csv.stderr
        plots = tmp_path / f"plots-{copy.stem}"
        plotted = pario("plot", "1", "--out", plots, "--db", copy, db=copy)
        assert plotted.returncode == 0 and len(list(plots.glob("*.png"))) == 2, plotted.stderr
        stored = pario(*SMALL_MODEL, "--db", copy, db=copy)
        assert stored.returncode == 2 and stored.stderr.strip().splitlines() == [
            f"pario: error: --db {copy} is on a read-only file system: pario cannot store there; "
            "choose a writable path (reading commands such as 'pario list' still work)"], stored.stderr
    assert sorted(os.listdir(ro)) == ["legacy.sqlite", "new.sqlite"]


def test_plot_of_an_immutable_database_writes_its_figures(tmp_path, disk_dir):
    """Item 14: as root, `chattr +i` left os.access saying writable... plot
    opened the database to record its files and failed ("attempt to write
    a readonly database")."""
    if os.geteuid() != 0:
        pytest.skip("chattr +i needs root")
    db = disk_dir / "imm.sqlite"
    assert pario(*SMALL_MODEL, "--db", db, "--out", tmp_path / "p0", db=db).returncode == 0
    if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable flag")
    try:
        before = _sha(db)
        r = pario("plot", "1", "--out", tmp_path / "p", "--db", db, db=db)
        assert r.returncode == 0 and len(list((tmp_path / "p").glob("*.png"))) == 2, r.stderr
        assert _sha(db) == before and _beside(db) == []
    finally:
        subprocess.run(["chattr", "-i", str(db)])


def test_a_truncated_database_is_damaged_as_a_corrupted_one_is(tmp_path):
    """Item 14: truncated read "not a pario results database (database disk
    image is malformed)", corrupted "is damaged"."""
    db = tmp_path / "r.sqlite"
    assert pario(*SMALL_MODEL, "--db", db, db=db).returncode == 0
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(db.read_bytes()[:20000])
    for args in (["list"], ["show", "1"], SMALL_MODEL):
        r = pario(*args, "--db", truncated, db=truncated)
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [
            f"pario: error: --db {truncated} is damaged (database disk image is malformed): pario will "
            "not write to it; restore it from a copy or choose another --db"], (args, r.stderr)


def test_model_with_an_output_it_cannot_write_stores_nothing(tmp_path):
    """Item 15: `pario model ... > /dev/full` and `| head -1` stored an
    empty incomplete run."""
    db = tmp_path / "r.sqlite"
    assert pario(*SMALL_MODEL, "--db", db, db=db).returncode == 0
    with open("/dev/full", "w") as full:
        r = _pario_into(full, *SMALL_MODEL, "--db", db, db=db)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        "pario: error: cannot write to standard output: No space left on device: free space or send "
        "the output elsewhere"), r.stderr
    # a reader gone before the first line (`| head -1` once head has left)
    read, write = os.pipe()
    os.close(read)
    try:
        r = _pario_into(write, *SMALL_MODEL, "--db", db, db=db)
    finally:
        os.close(write)
    assert r.returncode in (2, 141), r.stderr
    assert _runs(db) == [(1, "complete", 9)] and _beside(db) == []


def test_sigterm_stops_model_as_it_stops_run(tmp_path):
    """Item 16: SIGTERM of `pario model` exited 143 without a word."""
    db = tmp_path / "r.sqlite"
    proc = pario_background(*BIG_MODEL, "--db", db, db=db)
    try:
        assert wait_for(lambda: _stored_points(db) >= 1, 120), "no point stored"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, err)
    said = [l for l in err.splitlines() if l and not l.startswith("[")]
    assert said == ["run 1 stopped by SIGTERM: marked incomplete; finished points are kept"], err
    (run,) = _runs(db)
    assert run[:2] == (1, "incomplete") and run[2] >= 1
    # the points the stop left unrun are counted wherever the run's points are
    planned = int(re.search(r"run 1: (\d+) points", out).group(1))
    said = f"{run[2]} ok, {planned - run[2]} not run"
    assert planned > run[2] and said in pario("list", db=db).stdout
    assert f"points: {said}\n" in pario("show", "1", db=db).stdout
    report = tmp_path / "r.html"
    assert pario("report", "1", "--out", report, db=db).returncode == 0
    assert f'<td class="text">points</td><td class="text">{said}</td>' in report.read_text()
    # an export of it says what it holds (tester 19)
    export = pario("export", "1", "--csv", db=db)
    assert export.returncode == 0 and export.stderr == (f"pario: note: run 1 is incomplete ({said}): its export "
                                                        "holds the points it stored\n"), export.stderr


def test_sigterm_during_the_first_predicted_point_is_one_line_and_stores_nothing(tmp_path):
    """Tester 17, item 3: the first point (~10 s at 4096 ranks) was
    predicted before pario took SIGTERM: exit 143, no word, and the plan
    lines it had printed were lost."""
    db = tmp_path / "r.sqlite"
    proc = pario_background("model", "cfs", "--machine", "ipsc860", "--quick", "--tests", "partitioned",
                            "--ranks", "4096", "--blocks", "1m", "--size", "4g", "--set", "stripe.unit=16k",
                            "--set", "io_node.cache_block=16k", "--db", db, db=db)
    try:
        time.sleep(4)  # planned in about 1 s; the first point takes 10
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert err.strip() == "pario: stopped by SIGTERM before the run was stored", err
    assert not db.exists()


def test_a_ctrl_c_while_python_imports_pario_is_one_line(tmp_path):
    """Item 16: a Ctrl-C in the first ~0.1 s printed KeyboardInterrupt's
    traceback.  Made certain here: the SIGINT arrives while the CLI module
    is being imported."""
    # Python's own SIGINT handler, as in a terminal: a test run started in
    # the background inherits SIGINT ignored, and Python then keeps it so
    script = ("import importlib.abc, os, signal, sys\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "class Interrupt(importlib.abc.MetaPathFinder):\n"
              "    def find_spec(self, name, *args):\n"
              "        if name == 'pario.cli':\n"
              "            os.kill(os.getpid(), signal.SIGINT)\n"
              "        return None\n"
              "sys.meta_path.insert(0, Interrupt())\n"
              "sys.argv = ['pario', 'list']\n"
              "from pario.entry import main\n"
              "sys.exit(main())\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(tmp_path / "r.sqlite")}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 130 and r.stderr == "pario: interrupted\n", r.stderr


def test_list_names_a_missing_database_and_the_variable_that_named_it(tmp_path):
    """Item 17: `list --db MISSING` said "no runs" with exit 0 where every
    other command says there is no database; PARIO_DB=DIR was called --db."""
    missing = tmp_path / "missing.sqlite"
    for args in (["list"], ["show"], ["compare", "1", "2"], ["export", "1", "--csv"]):
        r = pario(*args, "--db", missing, db=missing)
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [
            f"pario: error: no results database at {missing}: start with 'pario run cfs --quick "
            "--dir DIR', or name one with --db"], (args, r.stderr)
    assert not missing.exists()
    r = pario("list", db=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"pario: error: PARIO_DB {tmp_path} is a directory: give a file name inside it"], r.stderr


@pytest.mark.parametrize("command", ["plot", "export"])
def test_a_db_name_too_long_for_the_system_is_one_line_for_commands_that_record_files(tmp_path, command):
    """plot and export --out open the database to record the files they
    write (Store.for_records), which looked whether it existed before the
    path's own check: a name over 255 bytes was an OSError traceback (the
    property test of every option found it)."""
    extra = ["--csv"] if command == "export" else []
    r = pario(command, "1", *extra, "--out", tmp_path / "out", "--db", "x" * 300, db=tmp_path / "unused.sqlite")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "--db is too long for this system" in r.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_a_stray_journal_with_no_database_names_no_shm(tmp_path):
    """Tester 23, item 11: a -journal is no WAL log, so its line named an
    '-shm' that goes with WAL files only."""
    db = tmp_path / "nd.sqlite"
    journal = tmp_path / "nd.sqlite-journal"
    journal.write_bytes(b"x")
    r = pario("list", "--db", db, db=db)
    assert r.returncode == 2 and "move nd.sqlite-journal away, or choose another path" in r.stderr, r.stderr
    assert "-shm" not in r.stderr and journal.read_bytes() == b"x"
