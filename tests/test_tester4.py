"""Tester report 4's findings, each through the real scripts, engine and
front end on small sizes: bench scripts that deleted files they did not
create and ended bad arguments in tracebacks, figure headings that claimed
fsync/eviction that did not run, figures that vanished without a word for
legal --ranks/--blocks, and a report whose table numbers collided."""

import os
import runpy
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "src"))
from pario.figures import Figure, Param, Quantity, Record, build, format_table, quantity_text  # noqa: E402

BENCH = ROOT / "bench"


def pario(*args, db, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


def bench(script, *args, env=None, timeout=300):
    return subprocess.run([sys.executable, str(BENCH / script), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)


@pytest.fixture
def absent_dir():
    """A path that does not exist yet, under /dev/shm; removed after."""
    d = Path("/dev/shm") / f"h-t4-bench-{uuid.uuid4().hex[:8]}"
    yield d
    shutil.rmtree(d, ignore_errors=True)


# B1 -------------------------------------------------------------------------

@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (make deps)")
def test_fio_bench_leaves_the_users_files_and_removes_only_its_own_directory(shm_dir, absent_dir):
    (shm_dir / "fio-bench.dat").write_text("mine\n")
    (shm_dir / "ior-bench-notes.txt").write_text("notes\n")
    (shm_dir / "fio-side-by-side.keep").mkdir()   # a name like the bench's own directory's
    r = bench("fio_side_by_side.py", "--dir", shm_dir, "--ranks", "1", "--size", "4m", "--blocks", "1m",
              "--rounds", "1")
    assert r.returncode == 0, r.stderr
    assert "1 MiB  write" in r.stdout and "1 MiB   read" in r.stdout, r.stdout
    assert sorted(os.listdir(shm_dir)) == ["fio-bench.dat", "fio-side-by-side.keep", "ior-bench-notes.txt"]
    assert (shm_dir / "fio-bench.dat").read_text() == "mine\n"
    assert (shm_dir / "ior-bench-notes.txt").read_text() == "notes\n"


def test_the_bench_directory_removes_the_parents_it_made_and_only_those(absent_dir, shm_dir):
    sys.path.insert(0, str(BENCH))
    import _args
    with _args.fresh_dir(absent_dir / "a" / "b", "x") as work:
        assert work.parent == absent_dir / "a" / "b" and work.name.startswith("x.")
        (work / "f").write_text("bench's own")
    assert not absent_dir.exists()
    with _args.fresh_dir(shm_dir, "x") as work:
        (shm_dir / "users").write_text("mine")   # made meanwhile: not the bench's
    assert os.listdir(shm_dir) == ["users"]


# B2 -------------------------------------------------------------------------

BAD = [
    ("fio_side_by_side.py", ["--size", "abc"], "size 'abc' is not a size"),
    ("fio_side_by_side.py", ["--ranks", "0"], "argument --ranks: 0 is too small"),
    ("fio_side_by_side.py", ["--rounds", "0"], "argument --rounds: 0 is too small"),
    ("fio_side_by_side.py", ["--blocks", "1m,x"], "argument --blocks: size 'x' is not a size"),
    ("fio_side_by_side.py", ["--ranks", "3", "--size", "4m", "--blocks", "1m"], "does not split into 3"),
    ("backends.py", ["--only", "stdio", "--stdio-size", "abc"], "--stdio-size 'abc' is not a size"),
    ("backends.py", ["--only", "moon"], "--only takes a comma-separated list of uring, memcpy, stdio"),
    ("backends.py", ["--rounds", "0"], "--rounds is gone"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--size", "abc"], "argument --size: size 'abc'"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--pairs", "0"], "argument --pairs"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--where", "moon"], "--where takes shm,disk"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--transfer-buffer", "abc"],
     "argument --transfer-buffer: size 'abc'"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--transfer-buffer", "64m", "--only", "per-call"],
     "--transfer-buffer sizes pario's --collective calls: add collective or hdf5 to --only"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--transfer-buffer", "1536k", "--only", "collective"],
     "--transfer-buffer must be a multiple of --block"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--transfer-hold", "0"],
     "argument --transfer-hold: size '0'"),
    ("mpiio_vs_ior.py", ["--ior", "/bin/true", "--transfer-hold", "64m", "--only", "per-call"],
     "--transfer-hold sizes pario's --collective calls: add collective or hdf5 to --only"),
    ("mpiio_counts.py", ["--ior", "/bin/true", "--transfer-buffer", "abc"],
     "argument --transfer-buffer: size 'abc'"),
    ("bonnie_side_by_side.py", ["--size", "abc"], "argument --size: size 'abc'"),
    ("bonnie_side_by_side.py", ["--settle", "-1"], "argument --settle"),
    ("bt_speed.py", ["--ranks", "abc"], "argument --ranks: 'abc' is not a whole number"),
    ("bt_speed.py", ["--class", "Z"], "argument --class: invalid choice"),
    ("busy_poll.py", ["--ranks", "0", "--rounds", "1"], "argument --ranks: 0 is too small"),
    ("busy_poll.py", ["--rounds", "0"], "argument --rounds: 0 is too small"),
    ("model_local.py", ["--rounds", "0"], "argument --rounds: 0 is too small"),
    ("model_claims.py", ["--bogus"], "unrecognized arguments: --bogus"),  # tester 23: it printed its table
    # tester 7: presets and --keep-db refused before a probe runs, not after minutes
    ("model_local.py", ["--presets", "nosuch"], "--presets: preset 'nosuch' is unknown"),
    ("model_local.py", ["--presets", "bonnie"], "bonnie is a study of kind bonnie, which the model does not"),
    ("model_local.py", ["--presets", "cfs,cfs"], "cfs is given twice: give each preset once"),
    ("model_local.py", ["--keep-db", "/nonexistent-pario-dir/k.sqlite"], "its directory does not exist"),
    ("model_local.py", ["--stream-blocks", "4k,4x"], "argument --stream-blocks: size '4x'"),
    ("model_local.py", ["--stream-blocks", "1m,1m"], "argument --stream-blocks: '1m,1m' gives 1 call size"),
    ("model_local.py", ["--stream-blocks", "4k,3k"], "argument --stream-blocks: '4k,3k': a call size must be"),
    ("model_local.py", ["--remodel", "x.sqlite", "--stream-blocks", "4k,1m"], "--stream-blocks sizes the probes"),
    ("model_local.py", ["--remodel", "x.sqlite", "--iterations", "5"], "--iterations sets the trials"),
    ("model_local.py", ["--iterations", "0"], "argument --iterations: 0 is too small"),
    ("uring_per_io.py", ["--size", "abc"], "argument --size: size 'abc'"),
    ("uring_per_io.py", ["--passes", "1"], "argument --passes: 1 is too small: give at least 2"),
    ("perf_side_by_side.py", ["--peer", "/bin/true", "--ranks", "1,0"], "argument --ranks: 0 is too small"),
    ("perf_side_by_side.py", ["--peer", "/bin/true", "--size", "abc"], "argument --size: size 'abc'"),
    ("perf_side_by_side.py", ["--peer", "/bin/true", "--rounds", "0"], "argument --rounds"),
    ("btio_speed.py", ["--npb", "/bin/true", "--ranks", "0"], "argument --ranks: 0 is too small"),
    ("bt_zeta.py", ["--rounds", "0"], "argument --rounds: 0 is too small"),
    ("freed_memory_age.py", ["--size", "abc"], "argument --size: size 'abc'"),
    ("model_speed.py", ["--ranks", "x"], "argument --ranks: 'x' is not a whole number"),
]


@pytest.mark.parametrize("script,args,phrase", BAD, ids=[f"{s}{' '.join(a)}" for s, a, _ in BAD])
def test_a_bad_bench_argument_is_one_line_and_exit_2_before_anything_is_made(script, args, phrase,
                                                                             absent_dir, monkeypatch,
                                                                             capsys):
    where = {"fio_side_by_side.py": ["--dir", absent_dir], "model_local.py": ["--dir", absent_dir],
             "bonnie_side_by_side.py": ["--dir", absent_dir], "bt_zeta.py": ["--dir", absent_dir],
             "uring_per_io.py": ["--disk", absent_dir], "freed_memory_age.py": ["--dir", absent_dir],
             "mpiio_vs_ior.py": ["--disk", absent_dir, "--shm", absent_dir],
             "backends.py": ["--disk", absent_dir, "--shm", absent_dir],
             "btio_speed.py": ["--dir", absent_dir]}.get(script, [])
    if script == "btio_speed.py":
        pytest.importorskip("numpy")
    # in this process (a new Python per case costs seconds on 2 busy cores):
    # any exception but the one-line SystemExit fails the test
    monkeypatch.setattr(sys, "argv", [str(BENCH / script), *map(str, where + args)])
    monkeypatch.setattr(sys, "path", [str(BENCH), *sys.path])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(BENCH / script), run_name="__main__")
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1, err
    assert phrase in lines[0] and lines[0].startswith("bench: "), lines[0]
    assert out == ""
    assert not absent_dir.exists()


@pytest.mark.parametrize("content,phrase", [
    (b"", "is not a pario results database (no such table: runs)"),
    (b"not a database at all\n", "is not a pario results database (file is not a database)"),
])
def test_model_local_remodels_only_a_results_database(tmp_path, content, phrase, monkeypatch, capsys):
    """Tester 11: --remodel of an empty or a text file was a traceback."""
    kept = tmp_path / "kept.sqlite"
    kept.write_bytes(content)
    monkeypatch.setattr(sys, "argv", [str(BENCH / "model_local.py"), "--remodel", str(kept)])
    monkeypatch.setattr(sys, "path", [str(BENCH), *sys.path])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(BENCH / "model_local.py"), run_name="__main__")
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1 and phrase in lines[0], lines
    assert kept.read_bytes() == content


def test_model_local_keeps_no_database_over_a_file(tmp_path, absent_dir, monkeypatch, capsys):
    """--keep-db names a new file: one there already is refused before
    anything is measured, and left as it was."""
    kept = tmp_path / "mine.sqlite"
    kept.write_text("a user's own file\n")
    monkeypatch.setattr(sys, "argv", [str(BENCH / "model_local.py"), "--dir", str(absent_dir),
                                      "--keep-db", str(kept)])
    monkeypatch.setattr(sys, "path", [str(BENCH), *sys.path])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(BENCH / "model_local.py"), run_name="__main__")
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1 and "--keep-db" in lines[0] and "exists" in lines[0]
    assert kept.read_text() == "a user's own file\n" and not absent_dir.exists()


@pytest.mark.parametrize("script,args", [
    ("fio_side_by_side.py", ["--ranks", "1", "--size", "4m", "--blocks", "1m", "--rounds", "1"]),
    ("bt_speed.py", ["--class", "S", "--ranks", "1", "--rounds", "1"]),
    ("busy_poll.py", ["--ranks", "1", "--rounds", "1"]),
    ("bt_zeta.py", ["--class", "S", "--rounds", "1"]),
])
def test_a_bench_without_the_engine_says_so_in_one_line(script, args, absent_dir):
    if script == "fio_side_by_side.py" and not shutil.which("fio"):
        pytest.skip("fio is not installed")
    extra = ["--dir", absent_dir] if script in ("fio_side_by_side.py", "bt_zeta.py") else []
    r = bench(script, *extra, *args, env={"PARIO_ENGINE": "/nonexistent/pario-engine"}, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "PARIO_ENGINE=/nonexistent/pario-engine is not an executable" in lines[0], lines[0]
    assert not absent_dir.exists()


def test_readme_runs_the_bench_scripts_with_the_venvs_python():
    text = (ROOT / "README.md").read_text()
    bare = [line for line in text.splitlines()
            if "python bench/" in line and ".venv/bin/python bench/" not in line]
    assert bare == []
    for script in BENCH.glob("*.py"):
        doc = script.read_text()
        assert not any(line.lstrip().startswith("python bench/") for line in doc.splitlines()), script


# A1 -------------------------------------------------------------------------

def test_ascired_api_headings_say_what_ran_not_what_the_preset_meant(disk_dir, shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("run", "ascired-api", "--quick", "--dir", disk_dir, "--tests", "large-posix", "--cached",
              "--no-fsync", "--direct", "--blocks", "1m", "--size", "4m", "--iterations", "1", db=db)
    assert r.returncode == 0, r.stderr
    read = next(line for line in r.stdout.splitlines() if line.startswith("Figure 5a."))
    write = next(line for line in r.stdout.splitlines() if line.startswith("Figure 5b."))
    assert "evicted from" not in read and "not evicted" in read and "O_DIRECT" in read, read
    assert "(fsync)" not in write and "no fsync: rates into the page cache" in write and "O_DIRECT" in write
    # the same on tmpfs: the heading says the file lives in memory, and a
    # compare of the two runs says the file systems differ (item 6)
    r = pario("run", "ascired-api", "--quick", "--dir", shm_dir, "--tests", "large-posix", "--cached",
              "--no-fsync", "--direct", "--blocks", "1m", "--size", "4m", "--iterations", "1", db=db)
    assert r.returncode == 0, r.stderr
    assert "O_DIRECT; the file lives in memory: read rates are memory rates" in r.stdout, r.stdout
    r = pario("compare", "1", "2", db=db)
    assert r.returncode == 0, r.stderr
    assert "warning: the runs differ in file system: run 1 ext4" in r.stdout.replace("\n", " "), r.stdout
    assert "run 2 tmpfs (in memory)" in " ".join(r.stdout.split()), r.stdout


# A2 -------------------------------------------------------------------------

def test_ascired_plans_say_which_figures_the_ranks_and_blocks_leave_out(tmp_path):
    db = tmp_path / "r.sqlite"
    base = ["--quick", "--dir", tmp_path, "--dry-run"]
    r = pario("run", "ascired-servers", *base, "--blocks", "64k,4m", db=db)
    assert r.returncode == 0, r.stderr
    # each named by its title, as show names it (tester 22: 'f1 (f1) left out' named an id twice)
    for table in ("Table 2 (Aggregate write bandwidth by aggregators (fyods) and ranks (... requests, 32 MiB file))",
                  "Table 3 (Aggregate read bandwidth by aggregators (fyods) and ranks (... requests, 32 MiB file))",
                  "Figure 10a (Read by number of aggregators (... requests, 32 MiB file))"):
        assert (f"plan: {table} left out: its tests run at block 1 MiB only: --blocks 64k,4m leaves "
                "them out (give --blocks with 1m)") in r.stdout, r.stdout
    r = pario("run", "ascired-servers", *base, "--ranks", "1,2", db=db)
    assert r.returncode == 0, r.stderr
    assert ("plan: Figure 8a (Read by request size: 4 ranks, 4 aggregators (32 MiB file)) left out: its tests "
            "run at ranks 4 only: --ranks 1,2 leaves "
            "them out (give --ranks with 4)") in r.stdout, r.stdout
    r = pario("run", "ascired-shared", *base, "--ranks", "1,2", "--blocks", "64k,256k", db=db)
    assert r.returncode == 0, r.stderr
    assert ("plan: Figure 11a (2 MiB reads by ranks (32 MiB in all)) left out: no point has block 2 MiB "
            "(this run: 64 KiB, "
            "256 KiB): give --blocks with 2m") in r.stdout, r.stdout
    # the one-rank points no figure shows are not run, and say why
    skips = [line for line in r.stdout.splitlines() if line.startswith("plan: skipping")]
    assert len(skips) == 1 and skips[0].startswith("plan: skipping 8 points (shared-atomic ranks=1 "), skips
    assert ("no figure of ascired-shared shows it (Figure 11a, Figure 11b: block 2 MiB; Figure 12a, "
            "Figure 12b: ranks 2 or 4 or 16)") in skips[0], skips[0]
    assert not any(" -np 1 " in line for line in r.stdout.splitlines())
    # every point left out: refused in one line
    r = pario("run", "ascired-shared", *base, "--ranks", "1", "--blocks", "64k", db=db)
    assert r.returncode == 2 and "no point of the plan is shown by a figure" in r.stderr, r.stderr
    # no runnable point at all: each point's reason first, then the one error line (item 14a)
    r = pario("run", "ascired-servers", *base, "--ranks", "3", db=db)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "plan: skipping agg-1 ranks=3" in r.stdout and "size is not a whole number of ranks x blocks" \
        in r.stdout, r.stdout
    # every test outside the lists: the one line names each test's own ranks/blocks
    r = pario("run", "ascired-servers", *base, "--ranks", "1,2", "--blocks", "64k,4m", db=db)
    assert r.returncode == 2 and "the plan has no point: agg-1, agg-2, agg-4: its tests run at block 1 MiB " \
        "only" in r.stderr and "--ranks 1,2 leaves them out (give --ranks with 4)" in r.stderr, r.stderr
    # --files would erase what ascired-shared compares (item 5)
    r = pario("run", "ascired-shared", *base, "--files", "per-rank", db=db)
    assert r.returncode == 2 and "--files does not apply: the tests of ascired-shared set their own files" \
        in r.stderr, r.stderr


def test_a_run_names_figures_left_out_and_the_report_numbers_its_own_tables_apart(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("run", "ascired-servers", "--quick", "--dir", shm_dir, "--tests", "agg-1,mpiio-indep",
              "--ranks", "1", "--blocks", "1m", "--size", "1m", "--iterations", "1", db=db)
    assert r.returncode == 0, r.stderr
    assert "Table 2. Aggregate write bandwidth" in r.stdout
    assert ("Figure 8a (Read by request size: 4 ranks, 4 aggregators (1 MiB file)) left out: its tests "
            "run at ranks 4 only: --ranks 1 leaves them out (give --ranks with 4)") in r.stdout, r.stdout
    out = tmp_path / "rep.html"
    r = pario("report", "1", "--out", out, db=db)
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert "<caption>Table P1. Provenance of run 1</caption>" in html
    assert html.count("<caption>Table 2. Aggregate write bandwidth") == 1   # the preset's own
    # a table, never drawn (item 14d): Figure 10 draws the same numbers
    assert "Plot of Table 2" not in html and "columns: ranks" in html
    pngs = sorted(p.name for p in (tmp_path / "plots" / "r.sqlite-run1").glob("*.png"))
    assert pngs and not any("table" in name for name in pngs), pngs
    assert "Table for Table" not in html and "<caption>Table 1." not in html


def test_a_label_of_several_values_names_its_numbers():
    from pario.studies.io import KIND
    recs = [Record({"ranks": 2, "files": "shared", "atomic": True, "block": 65536, "phase": "write"},
                   {"rate": [10.0]})]
    fig = Figure(id="f12", title="Writes", x="block", series=("ranks", "files", "atomic"), y="rate")
    data = build(fig, recs, KIND.params, KIND.quantities)
    assert list(data.series_labels.values()) == ["ranks 2, shared, atomic (MUNIX)"]
    one = Figure(id="t2", title="Table 2", x="aggregators", series="ranks", y="rate")
    recs[0].params["aggregators"] = 1
    data = build(one, recs, KIND.params, KIND.quantities)
    assert list(data.series_labels.values()) == ["2"]            # its column head names it
    assert list(data.series_names.values()) == ["ranks 2"]       # a finding quotes it alone


# R1 -------------------------------------------------------------------------

def test_a_normalised_figure_names_its_unitless_quantity_without_in():
    params = {"background": Param("loaders per node", str, "linear"), "test": Param("test")}
    records = [Record({"background": n, "test": "t"}, {"rate": [100.0 / (n + 1)]}) for n in (0, 1, 2)]
    fig = Figure(id="fig3", number="Figure 3a", title="Read under load", x="background", series="test",
                 y="rate", normalise={"background": 0})
    data = build(fig, records, params, {"rate": Quantity("", "MiB/s", "max")})
    assert quantity_text(data) == "rate / rate at loaders per node 0"
    assert format_table(data).splitlines()[0] == \
        "Figure 3a. Read under load: rate / rate at loaders per node 0, one trial"


# item 12 -------------------------------------------------------------------

def test_a_stripe_directory_the_run_made_and_must_leave_is_named_not_left_silently(tmp_path):
    from pario.rundirs import RunDirs
    dirs = RunDirs(tmp_path, ["stripe-0", "stripe-1"])
    dirs.check()
    dirs.create()
    (tmp_path / "stripe-1" / "other-run.part").write_text("another run's")
    left = dirs.remove()
    assert not (tmp_path / "stripe-0").exists()
    assert (tmp_path / "stripe-1" / "other-run.part").read_text() == "another run's"
    assert len(left) == 1 and left[0].startswith(f"left {tmp_path / 'stripe-1'}, a stripe directory pario "
                                                 "made"), left
    assert "(other-run.part)" in left[0]


def test_the_stdio_buffer_column_carries_its_unit_as_every_size_does():
    from pario.runs import _param_columns
    from pario.studies.io import KIND
    assert _param_columns({"stdio_buffer": 8192, "block": 4096}, KIND.params) == \
        {"stdio_buffer_bytes": 8192, "block_bytes": 4096}


def test_a_stripe_target_removed_mid_run_is_named_as_pario_made_it(shm_dir, tmp_path):
    # the launcher of the first point removes stripe-1 after its engine is done
    count, script = tmp_path / "count", tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                      "mpirun --oversubscribe -np \"$@\"; rc=$?\n"
                      "case \"$*\" in *--json*) [ -e %s ] || { touch %s; rm -rf %s/stripe-1; };; esac\n"
                      "exit $rc\n" % (count, count, shm_dir))
    script.chmod(0o755)
    r = pario("run", "ascired-api", "--quick", "--dir", shm_dir, "--tests", "striped-posix", "--blocks",
              "64k,1m", "--size", "2m", "--iterations", "1",
              "--launcher-template", f"{script} {{ranks}} {{engine}} {{engine_args}}", db=tmp_path / "r.sqlite")
    assert r.returncode == 3, r.stdout + r.stderr
    assert (f"{shm_dir}/stripe-1, a stripe target pario made or checked for this run, is gone or no longer "
            "a directory") in r.stdout + r.stderr
    assert "--stripe-dirs" not in r.stdout + r.stderr


def test_a_split_figure_names_a_test_once_not_by_its_id_and_its_title():
    from pario.figures import split_varying
    from pario.studies.io import KIND
    recs = [Record({"test": t, "title": title, "block": 65536, "phase": "read"}, {"rate": [1.0]})
            for t, title in (("qd1", "uring QD 1"), ("qd64", "uring QD 64"))]
    fig = Figure(id="f1", title="Reads by request size", x="block", series=None, y="rate")
    assert [p.title for p in split_varying(fig, recs, KIND.params)] == [
        "Reads by request size (test uring QD 1)", "Reads by request size (test uring QD 64)"]


def test_runs_of_one_experiment_sharing_no_point_say_what_differs():
    from types import SimpleNamespace
    from pario.analysis.compare import differing
    from pario.compare_runs import _values
    from pario.studies.io import KIND
    a = [SimpleNamespace(identity={"test": "large-posix", "size": 128 << 20, "extra": ["--evict"], "ranks": 1})]
    b = [SimpleNamespace(identity={"test": "large-posix", "size": 16 << 20, "extra": ["--direct", "--evict"],
                                   "ranks": 1})]
    assert differing(a, b) == ["size", "extra"]
    assert _values(a, "size", KIND.params) == "128 MiB" and _values(b, "extra", KIND.params) == "[--direct --evict]"
