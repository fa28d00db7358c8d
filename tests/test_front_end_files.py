"""Files pario did not create stay untouched: figure names taken by a
user's file or a symlink (pario plot --out, pario run --out, the default
plots folder), a --db that is not pario's under a read-only command; and
the one-line answers for a --dir that is a file or empty."""

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT

ONE_POINT = ["--tests", "partitioned", "--ranks", "2", "--blocks", "64k", "--size", "1m",
             "--iterations", "1"]
NAMES = ["run1-partitioned-read.png", "run1-partitioned-write.png"]


def pario(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


@pytest.fixture(scope="module")
def stored_run():
    """One stored cfs run (run 1) with its default plots folder."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="pario-test-files-") as home, \
            tempfile.TemporaryDirectory(dir="/dev/shm", prefix="pario-test-files-") as target:
        db = Path(home) / "r.sqlite"
        r = pario("run", "cfs", "--dir", target, *ONE_POINT, db=db)
        assert r.returncode == 0, r.stderr
        assert sorted(os.listdir(Path(home) / "plots" / "r.sqlite-run1")) == NAMES
        yield Path(home), db, target


def test_two_databases_of_one_stem_keep_their_own_default_plots(tmp_path, shm_dir):
    for name in ("r.sqlite", "r.db"):
        r = pario("run", "cfs", "--dir", str(shm_dir), *ONE_POINT, db=tmp_path / name)
        assert r.returncode == 0, r.stderr
        assert sorted(os.listdir(tmp_path / "plots" / f"{name}-run1")) == NAMES


def _plant(folder, victim):
    """A user's file at one figure name, a symlink to `victim` at the other."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NAMES[0]).write_text("mine\n")
    os.symlink(victim, folder / NAMES[1])


def _untouched(folder, victim):
    assert (folder / NAMES[0]).read_text() == "mine\n"
    assert os.path.islink(folder / NAMES[1]) and victim.read_text() == "precious\n"
    assert sorted(os.listdir(folder)) == NAMES  # no temporary file left either


def test_replot_into_the_default_folder_and_an_out_folder_it_made_works(stored_run):
    home, db, _ = stored_run
    out = home / "replot"
    for _ in range(2):
        for extra in ([], ["--out", str(out)]):
            r = pario("plot", "1", *extra, db=db)
            assert r.returncode == 0, r.stderr
            assert "plots: 2 PNG files" in r.stdout
    for folder in (home / "plots" / "r.sqlite-run1", out):
        assert sorted(os.listdir(folder)) == NAMES
        assert all((folder / n).read_bytes()[:4] == b"\x89PNG" for n in NAMES)


def test_plot_leaves_a_users_file_and_a_symlink_at_figure_names_untouched(stored_run):
    home, db, _ = stored_run
    victim = home / "victim.txt"
    victim.write_text("precious\n")
    out = home / "taken"
    _plant(out, victim)
    r = pario("plot", "1", "--out", str(out), db=db)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    # the first figure name taken: the user's file, or a symlink (named as one, tester 11)
    assert ("already exists and is not a file this results database recorded writing there" in r.stderr
            or "already exists and is a symlink: pario never writes through one" in r.stderr), r.stderr
    assert any(str(out / n) in r.stderr for n in NAMES) and "--out" in r.stderr
    _untouched(out, victim)


def test_a_replot_after_the_user_changed_a_figure_refuses(stored_run):
    home, db, _ = stored_run
    out = home / "changed"
    assert pario("plot", "1", "--out", str(out), db=db).returncode == 0
    (out / NAMES[0]).write_bytes(b"edited by hand")
    r = pario("plot", "1", "--out", str(out), db=db)
    assert r.returncode == 2 and "already exists" in r.stderr
    assert (out / NAMES[0]).read_bytes() == b"edited by hand"


@pytest.mark.parametrize("use_out", [True, False])
def test_run_leaves_a_users_file_and_a_symlink_at_figure_names_untouched(tmp_path, shm_dir, use_out):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    db = tmp_path / "r.sqlite"
    folder = tmp_path / "out" if use_out else tmp_path / "plots" / "r.sqlite-run1"
    _plant(folder, victim)
    r = pario("run", "cfs", "--dir", str(shm_dir), *ONE_POINT,
              *(["--out", str(folder)] if use_out else []), db=db)
    # the run is stored: a distinct outcome (exit 4, README), not "nothing stored"
    warned = [l for l in r.stderr.splitlines() if l.startswith("pario: warning:")]
    assert r.returncode == 4 and len(warned) == 1 and "pario: error" not in r.stderr, r.stderr
    assert "run 1 is stored, but not all its plots were written" in warned[0]
    assert "already exists" in warned[0]
    _untouched(folder, victim)


def test_read_only_commands_leave_a_file_that_is_not_a_database_untouched(stored_run, tmp_path):
    _, db, _ = stored_run
    for content in (b"", b"some notes\n"):
        mine = tmp_path / "mine.txt"
        mine.write_bytes(content)
        for args in (["list"], ["show"], ["plot"], ["compare", "1", "2"], ["export", "1", "--csv"]):
            r = pario(*args, "--db", str(mine), db=db)
            assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, (args, r.stderr)
            assert "not a pario results database" in r.stderr
            assert mine.read_bytes() == content
            assert sorted(os.listdir(tmp_path)) == ["mine.txt"]


def test_read_only_commands_write_nothing_to_a_pario_database(stored_run):
    _, db, _ = stored_run
    before = db.read_bytes(), os.stat(db).st_mtime_ns
    for args in (["list"], ["show", "1"], ["export", "1", "--json"]):
        r = pario(*args, "--db", str(db), db=db)
        assert r.returncode == 0, r.stderr
    assert (db.read_bytes(), os.stat(db).st_mtime_ns) == before
    assert sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(
        "SELECT count(*) FROM runs").fetchone()[0] >= 1


def test_dir_that_is_a_file_or_empty_says_so(tmp_path):
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    r = pario("run", "cfs", "--quick", "--dir", str(a_file), db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and f"--dir {a_file} is not a directory" in r.stderr, r.stderr
    r = pario("run", "cfs", "--quick", "--dir", "", db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "--dir needs a directory" in r.stderr, r.stderr
    assert not (tmp_path / "r.sqlite").exists()


NORMALISED = """name = "norm"
title = "normalise check"
[sweep]
ranks = [1]
blocks = ["64k"]
size = "1m"
iterations = 1
background = [0, 1]
kind_figures = false
[[test]]
id = "cpu-load"
title = "CPU spinners"
layout = "partitioned"
phases = ["write"]
background_kind = "cpu"
[[figure]]
id = "fign"
title = "Write under load"
x = "background"
series = "title"
y = "rate"
normalise = { background = 0 }
where = { phase = "write" }
"""


def test_a_normalise_value_no_point_has_is_refused_and_an_empty_figure_is_named(tmp_path, shm_dir):
    bad = tmp_path / "n99.toml"
    bad.write_text(NORMALISED.replace("background = 0 }", "background = 99 }"))
    db = tmp_path / "r.sqlite"
    r = pario("run", str(bad), "--dir", str(shm_dir), db=db)
    assert r.returncode == 2 and not db.exists(), r.stderr
    assert "figure fign: normalise background = 99 matches no point of the plan" in r.stderr
    good = tmp_path / "n.toml"
    good.write_text(NORMALISED)
    r = pario("run", str(good), "--dir", str(shm_dir), db=db)
    assert r.returncode == 0 and "left out" not in r.stdout, r.stderr
    # A run stored by an older pario, whose figure finds no baseline: show
    # and plot say which figure is missing and why.
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET experiment_toml=replace(experiment_toml, 'background = 0 }', "
                "'background = 99 }')")
    con.commit()
    con.close()
    for args in (["show"], ["plot", "--out", str(tmp_path / "p")]):
        r = pario(*args, db=db)
        assert r.returncode == 0, r.stderr
        assert ("figure fign (Write under load) left out: no point has background = 99 "
                "to normalise by") in r.stdout


def test_btio_takes_classes_and_a_plan_with_no_point_says_why_first(tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    r = pario("run", "btio", "--quick", "--dir", str(shm_dir), "--ranks", "1,4", "--classes", "S",
              "--dry-run", db=db)
    assert r.returncode == 0, r.stderr
    assert "--class S" in r.stdout and "--class W" not in r.stdout
    r = pario("run", "btio", "--quick", "--dir", str(shm_dir), "--classes", "Q", "--dry-run", db=db)
    assert r.returncode == 2 and "--classes Q is unknown" in r.stderr
    r = pario("run", "btio", "--quick", "--dir", str(shm_dir), "--ranks", "2,3", "--dry-run", db=db)
    assert r.returncode == 2 and "the plan has no runnable point" in r.stderr
    # ten points over the rounds: told once per reason (tester 20, item 7), each naming one of its points
    said = [l for l in r.stdout.splitlines() if l.startswith("plan: skipping")]
    assert len(said) == 2, r.stdout
    assert said[1].startswith("plan: skipping 5 points (btio full ranks=3 ")
    assert said[1].endswith("...): multi-partition needs a square rank count, not 3")
    assert not db.exists()


def test_a_kind_shortcut_and_compare_have_their_own_help(tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("probe", "--help", db=db)
    assert r.returncode == 0 and r.stdout.startswith("usage: pario probe"), r.stdout
    assert "--stream-blocks" in r.stdout and "experiment" not in r.stdout
    assert "--blocks" not in r.stdout  # another kind's option
    r = pario("probe", db=db)
    assert r.returncode == 2 and "see 'pario probe --help'" in r.stderr and "--dir" in r.stderr
    r = pario("compare", "--help", db=db)
    assert r.returncode == 0
    for words in ("measured against predicted", "run_a", "run_b", "reference run", "predicted one",
                  "results database holding both runs"):
        assert words in " ".join(r.stdout.split()), words
    assert not db.exists()


def test_a_preset_error_shows_toml_values_and_list_aligns_its_columns(stored_run, tmp_path):
    bad = tmp_path / "b.toml"
    bad.write_text('name = "x"\ntitle = "t"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = true\n'
                   '[[test]]\nid = "a"\nlayout = "partitioned"\nphases = ["write"]\n')
    r = pario("run", str(bad), "--dir", str(tmp_path), "--dry-run", db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "sweep.size: true is not a size" in r.stderr, r.stderr
    _, db, _ = stored_run
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET preset='a-much-longer-preset' WHERE id=1")
    con.commit()
    try:
        lines = pario("list", db=db).stdout.splitlines()
    finally:
        con.execute("UPDATE runs SET preset='cfs' WHERE id=1")
        con.commit()
        con.close()
    assert [l.index("status") for l in lines[:1]] == [l.index("complete") for l in lines[1:2]]
    assert lines[0].index("dir") == lines[1].index(" /") + 1


NO_FSYNC_TEST = """name = "nofsync"
title = "no fsync"
[sweep]
ranks = [1]
blocks = ["64k"]
size = "1m"
iterations = 1
[[test]]
id = "cached"
layout = "partitioned"
phases = ["write"]
fsync = false
[[test]]
id = "synced"
layout = "partitioned"
phases = ["write"]
"""


def test_warnings_about_the_presets_own_choices_are_left_out(tmp_path, shm_dir):
    """A test's fsync = false draws no "drop --no-fsync" (the user's
    --no-fsync still does); btio, which has no zeta, no "no --tc given"."""
    toml = tmp_path / "n.toml"
    toml.write_text(NO_FSYNC_TEST)
    db = tmp_path / "r.sqlite"
    r = pario("run", str(toml), "--dir", str(shm_dir), "--tests", "cached", db=db)
    assert r.returncode == 0, r.stderr
    assert "without fsync" not in r.stdout
    r = pario("run", str(toml), "--dir", str(shm_dir), "--tests", "synced", "--no-fsync", db=db)
    assert r.returncode == 0 and "drop --no-fsync [synced]" in r.stdout, r.stdout
    r = pario("run", "btio", "--quick", "--dir", str(shm_dir), "--ranks", "1", "--classes", "S",
              "--tests", "full", "--iterations", "1", db=db)
    assert r.returncode == 0 and "points: 1 ok" in r.stdout, r.stderr
    assert "--tc" not in r.stdout


def _damaged_copy(db, into):
    """The database with every page after the first (the schema) overwritten
    by random bytes: SQLite opens it and fails when a query reaches a page."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = os.urandom(len(data) - page)
    damaged = into / "damaged.sqlite"
    damaged.write_bytes(bytes(data))
    return damaged


def test_a_damaged_database_is_one_line_in_every_command_and_run_writes_nothing(stored_run, tmp_path,
                                                                                  shm_dir):
    _, db, _ = stored_run
    damaged = _damaged_copy(db, tmp_path)
    before = damaged.read_bytes()
    for args in (["list"], ["show", "1"], ["export", "1", "--csv"], ["compare", "1", "1"],
                 ["plot", "1", "--out", str(tmp_path / "p")],
                 ["run", "cfs", "--dir", str(shm_dir), *ONE_POINT]):
        r = pario(*args, "--db", str(damaged), db=db)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, (args, r.stderr)
        assert f"--db {damaged} is damaged (" in r.stderr, (args, r.stderr)
        assert damaged.read_bytes() == before
    # nor a plots folder, nor a journal beside it
    assert set(os.listdir(tmp_path)) == {"damaged.sqlite"}
    assert list(shm_dir.iterdir()) == []                     # nor a point run


def test_plot_out_creates_at_most_its_last_name(stored_run, tmp_path):
    _, db, _ = stored_run
    r = pario("plot", "1", "--out", str(tmp_path / "typo" / "plots"), db=db)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"directory {tmp_path / 'typo'} does not exist" in r.stderr
    assert list(tmp_path.iterdir()) == []
    r = pario("plot", "1", "--out", str(tmp_path / "plots"), db=db)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "plots")) == NAMES


def test_an_experiment_that_is_not_a_regular_file_or_too_large_is_refused(tmp_path):
    """/dev/zero behind a .toml name would be read until memory ran out, a
    fifo would block forever (tester 2, F-m)."""
    os.symlink("/dev/zero", tmp_path / "zero.toml")
    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "huge.toml").write_bytes(b"# " + b"x" * (2 << 20) + b"\n")
    for name, phrase in (("zero.toml", "is not a regular file"), ("fifo.toml", "is not a regular file"),
                         ("huge.toml", "too large to be an experiment")):
        r = pario("run", str(tmp_path / name), "--dir", str(tmp_path), "--quick",
                  db=tmp_path / "r.sqlite")
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and phrase in lines[0], (name, r.stderr)
    assert not (tmp_path / "r.sqlite").exists()


def test_a_size_written_as_a_bare_number_names_its_key(tmp_path):
    """size = 128 would be 128 bytes and the plan would blame options the
    user never gave (tester 2, F-n)."""
    exp = tmp_path / "n.toml"
    exp.write_text(NO_FSYNC_TEST.replace('size = "1m"', "size = 128"))
    r = pario("run", str(exp), "--dir", str(tmp_path), db=tmp_path / "r.sqlite")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "sweep.size: 128 is a bare number (it would be 128 bytes)" in lines[0] and '"128m"' in lines[0]
    assert "--size" not in lines[0] and not (tmp_path / "r.sqlite").exists()


def test_a_large_bare_size_is_not_told_to_take_a_unit(tmp_path):
    """Tester 23, item 4: 'size = 8388608' was told to write "8388608m"
    (8 TiB); a large bare number is bytes, and says so."""
    f = tmp_path / "big.toml"
    f.write_text('name = "big"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = 8388608\n'
                 '[[test]]\nid = "t"\nlayout = "partitioned"\nphases = ["write"]\n')
    r = pario("run", f, "--dir", tmp_path, db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and 'sweep.size: 8388608 is a bare number (it would be 8388608 bytes): write the ' \
        'size in quotes, e.g. "8388608" for bytes' in r.stderr, r.stderr
