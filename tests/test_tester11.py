"""Tester 11's findings about the front end, each driven through
the real command line: a closed standard output, a file beside the
database that no SQLite made, a figure left out named with its run's
values, and failed points told apart by their call size."""

import os
import subprocess
import sys

from conftest import ROOT

ONE = ["--tests", "partitioned", "--ranks", "1", "--size", "1m", "--iterations", "1"]


def pario(*args, db, shell_tail=""):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    if shell_tail:  # a redirection the shell makes, e.g. closing descriptor 1
        line = " ".join([sys.executable, "-m", "pario", *map(str, args)]) + " " + shell_tail
        return subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=ROOT, env=env,
                              timeout=300)
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def test_a_closed_standard_output_is_one_line_and_nothing_runs(tmp_path, shm_dir):
    """`pario list >&-` gave two tracebacks and exit 120: one line, exit
    2, and a run refused before it stores anything."""
    db = tmp_path / "r.sqlite"
    for args in (["list"], ["--version"], ["run", "cfs", "--quick", "--dir", shm_dir, *ONE]):
        r = pario(*args, db=db, shell_tail=">&-")
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr == ("pario: error: standard output is closed: send it somewhere, e.g. > "
                            "/dev/null or > FILE\n"), r.stderr
    assert not db.exists()


def test_a_file_beside_the_database_that_no_sqlite_made_is_left_alone(tmp_path, shm_dir):
    """SQLite deleted a -journal of the user's notes beside the database on
    `show` (tester 11, item 2): refused in one line, the file kept; an
    empty one, or one that begins with zeros (a writer's, before its
    sync), is read past."""
    db = tmp_path / "r.sqlite"
    assert pario("run", "cfs", "--quick", "--dir", shm_dir, *ONE, "--blocks", "64k", db=db).returncode == 0
    notes = tmp_path / "r.sqlite-journal"
    notes.write_text("my notes\n")
    for args in (["show"], ["list"], ["export", "1", "--csv"]):
        r = pario(*args, db=db)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, (args, r.stderr)
        assert "r.sqlite-journal lies beside PARIO_DB" in r.stderr and "is no SQLite journal" in r.stderr
        assert "move r.sqlite-journal away" in r.stderr
        assert notes.read_text() == "my notes\n"
    notes.write_text("")
    r = pario("show", db=db)
    assert r.returncode == 0, r.stderr
    assert notes.exists()
    # a writer's journal before its sync: zeros where the magic number goes
    # (a second run writing the same database meets it)
    notes.write_bytes(bytes(28) + b"pages")
    r = pario("show", db=db)
    assert r.returncode == 0, r.stderr


def test_failed_points_read_apart_by_their_call_size():
    """Two failures of one test at two call sizes printed the same line in
    show and the report (tester 11, item 4): each names its block; a point
    stored without one (none measured) names none."""
    from pario.runner import failure_line

    def row(block):
        return {"test_id": "partitioned", "layout": "partitioned", "ranks": 1, "block_bytes": block,
                "error": "timed out after 0.35 s"}

    assert failure_line(row(512)) == "partitioned ranks=1 block=512 B: timed out after 0.35 s"
    assert failure_line(row(4 << 20)) == "partitioned ranks=1 block=4 MiB: timed out after 0.35 s"
    assert failure_line(row(None)) == "partitioned ranks=1: timed out after 0.35 s"


def test_a_figure_left_out_names_its_runs_values(tmp_path, shm_dir):
    """A figure left out named its title's {size} raw in show (item 3):
    the run's size is written in."""
    db = tmp_path / "s.sqlite"
    r = pario("run", "ascired-shared", "--quick", "--tests", "shared-relaxed", "--ranks", "1,2", "--blocks",
              "64k", "--size", "2m", "--iterations", "1", "--dir", shm_dir, db=db)
    assert r.returncode == 0, r.stderr
    show = pario("show", db=db).stdout
    assert "{size}" not in show and "(2 MiB reads by ranks (2 MiB in all)) left out" in show, show


def test_out_names_what_is_there_and_a_fix_that_removes_nothing(tmp_path, shm_dir):
    """`--out /dev/null` was told to remove it, `--out DIR` read as another
    program's file, and `--out new.csv/` wrote a file named new.csv (tester
    11, items 7-8): each refused in one line saying what is there, the
    thing left as it was."""
    db = tmp_path / "r.sqlite"
    assert pario("run", "cfs", "--quick", "--dir", shm_dir, *ONE, "--blocks", "64k", db=db).returncode == 0
    (tmp_path / "out").mkdir()
    target = tmp_path / "mine.csv"
    target.write_text("mine\n")
    (tmp_path / "link.csv").symlink_to(target)
    for out, words in (("/dev/null", "--out /dev/null already exists and is not a regular file (a device, "
                                     "a fifo or a socket): pario writes only files of its own; give a new "
                                     "file name"),
                       (tmp_path / "out", "already exists and is a directory: pario writes a file, not into "
                                          "one; give a file name inside it"),
                       (f"{tmp_path}/out/", "ends in '/', a directory's name: give a file name"),
                       (f"{tmp_path}/new.csv/", "ends in '/', a directory's name: give a file name"),
                       (tmp_path / "link.csv", "already exists and is a symlink: pario never writes "
                                               "through one; give the real path or a new name")):
        r = pario("export", "1", "--csv", "--out", out, db=db)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, (out, r.stderr)
        assert words in r.stderr, (out, r.stderr)
    assert not (tmp_path / "new.csv").exists() and os.listdir(tmp_path / "out") == []
    assert target.read_text() == "mine\n" and (tmp_path / "link.csv").is_symlink()


def test_a_file_written_beside_a_read_only_database_says_it_is_not_recorded(tmp_path, shm_dir):
    """With a database pario cannot write (immutable here), export --out
    writes the file but cannot record it, so the same command later refuses
    it as another program's (tester 11, item 5): the first one says so."""
    db = tmp_path / "r.sqlite"
    assert pario("run", "cfs", "--quick", "--dir", shm_dir, *ONE, "--blocks", "64k", db=db).returncode == 0
    if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
        import pytest

        pytest.skip("cannot make the database immutable here (chattr +i: root on ext4)")
    try:
        out = tmp_path / "e.csv"
        r = pario("export", "1", "--csv", "--out", out, db=db)
        assert r.returncode == 0 and out.exists(), r.stderr
        assert (f"pario: warning: PARIO_DB {db} is read-only, so {out} is written but not recorded as "
                "pario's: a later run of this command will not replace it") in r.stderr, r.stderr
        again = pario("export", "1", "--csv", "--out", out, db=db)
        assert again.returncode == 2 and "is not a file this results database recorded" in again.stderr
        # writable: recorded, no warning, and replaced by the next export
        subprocess.run(["chattr", "-i", str(db)], check=True)
        other = tmp_path / "f.csv"
        for _ in range(2):
            r = pario("export", "1", "--csv", "--out", other, db=db)
            assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    finally:
        subprocess.run(["chattr", "-i", str(db)], capture_output=True)


MODEL = ["model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1",
         "--machine", ROOT / "src/pario/model/machines/asci-red.toml"]


def test_a_database_made_for_a_run_whose_first_line_failed_goes_with_it(tmp_path):
    """Item 9: `pario model ... > /dev/full` left the empty database it had
    just created; one that was there before stays, with its runs."""
    db = tmp_path / "new.sqlite"
    r = pario(*MODEL, db=db, shell_tail="> /dev/full")
    assert r.returncode == 2 and r.stderr.endswith(
        "pario: error: cannot write to standard output: No space left on device: free space or send "
        "the output elsewhere\n"), r.stderr
    assert list(tmp_path.iterdir()) == []
    assert pario(*MODEL, db=db, shell_tail="> /dev/null").returncode == 0
    assert pario(*MODEL, db=db, shell_tail="> /dev/full").returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite", "plots"]  # of the run that ran
    assert pario("list", db=db).stdout.count("complete") == 1


def test_a_full_standard_error_changes_no_exit_status(tmp_path):
    """Item 9: with standard error full too, a refusal exited 1 (Python's
    own end on the failing print) instead of 2; a run is not ended by its
    progress lines."""
    db = tmp_path / "r.sqlite"
    r = pario("list", db=db, shell_tail="> /dev/full 2> /dev/full")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "")
    assert pario("show", "7", db=db, shell_tail="2> /dev/full").returncode == 2
    r = pario(*MODEL, db=db, shell_tail="> /dev/null 2> /dev/full")
    assert r.returncode == 0 and r.stderr == ""
    assert "complete" in pario("list", db=db).stdout


def test_values_are_never_printed_in_scientific_notation_and_times_read_in_their_unit():
    """Item 11: compare printed 1.865e+04 MiB/s and 1.345e-07 s."""
    from pario.units import format_value, time_unit

    assert [format_value(v, ".4g") for v in (18650.4, 2126000.0, 1234.5, 0.0001345, 12.0)] == [
        "18650", "2126000", "1234", "0.0001345", "12"]
    assert format_value(-1.5e5, ".3g") == "-150000" and format_value(7.2e-7, ">8.2g") == "0.00000072"
    assert [time_unit(s) for s in (12.5, 1.0, 0.0016, 3.5e-6, 1.3e-7, 0.0)] == [
        ("s", 1.0), ("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9), ("ns", 1e-9)]


def test_compare_of_probes_at_two_call_sizes_names_a_call_size_only_where_it_counts(tmp_path, shm_dir):
    """Item 11: the barrier, the metadata rates and every other row that
    the stream's calls do not touch were compared once per call size,
    each labelled with it; they are one row now, their trials pooled as
    'pario show' pools them, and a time reads in ns or µs."""
    db = tmp_path / "p.sqlite"
    for _ in range(2):
        r = pario("probe", "--dir", shm_dir, "--quick", "--size", "8m", "--iterations", "2", "--ranks", "2",
                  "--stream-blocks", "4k,64k", db=db)
        assert r.returncode == 0, r.stderr
    r = pario("compare", "1", "2", db=db)
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l.startswith("probe ")]
    barrier = [l for l in rows if "(barrier)" in l]
    assert len(barrier) == 1 and "calls" not in barrier[0], barrier
    assert " ns " in barrier[0] or " µs " in barrier[0], barrier
    creates = [l for l in rows if "creates" in l]
    assert len(creates) == 1 and "calls" not in creates[0]
    # the stream rows stay one per call size, and say it
    writes = [l for l in rows if "one stream write (preallocated" in l]
    assert len(writes) == 2 and any("4 KiB" in l for l in writes) and any("64 KiB" in l for l in writes)
    assert "e+" not in r.stdout and "e-0" not in r.stdout
    # tester 12, item 8: the count of trials is each group's, not the fewest of all ("31 with 1")
    few = " ".join(r.stdout.split()).split("too few trials: ")[-1]
    assert "with 2 trials on a side" in few and "4 with 1)" in few, few
