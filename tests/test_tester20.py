"""Tester 20's findings on the ASCI Red studies, through the real engine
and front end on small sizes."""

import os
import subprocess

import pytest


@pytest.mark.parametrize("size,fix", [
    ("3m", "--size 3 MiB is not 2 per-rank file(s) of whole 1 MiB blocks: make it a multiple of 2 MiB "
           "(2 rank(s) x 1 MiB)"),
    ("3145729", "--size 3145729 B is not 2 per-rank file(s) of whole 1 MiB blocks"),
])
def test_per_rank_files_name_the_size_that_splits_into_whole_blocks(engine, launcher, shm_dir, size, fix):
    """Item 5: 3 MiB over 2 per-rank files of 1 MiB blocks was told to be
    'a multiple of 1 MiB', which it is; the fix is a multiple of 2 MiB."""
    p = subprocess.run(launcher.command(2, [engine, "io", "--dir", shm_dir, "--files", "per-rank",
                                            "--block", "1m", "--size", size, "--iterations", "1"]),
                       capture_output=True, text=True, env=launcher.environment(), timeout=120)
    assert p.returncode != 0 and f"pario-engine: error: {fix}" in p.stderr, p.stderr
    assert os.listdir(shm_dir) == []


def test_a_test_that_quick_s_lists_leave_out_is_named_not_an_empty_reason(tmp_path):
    """Item 2: a test whose own ranks --quick's list leaves out vanished;
    with nothing left the error read 'no runnable point (): check
    sweep.ranks and sweep.blocks'."""
    from test_front_end import pario

    f = tmp_path / "mine.toml"
    f.write_text('name = "mine"\n[sweep]\nranks = [1, 2]\nblocks = ["64k"]\nsize = "1m"\n[quick]\nranks = [1]\n'
                 '[[test]]\nid = "a"\nlayout = "partitioned"\nphases = ["write"]\nranks = [2]\n')
    db = tmp_path / "r.sqlite"
    r = pario("run", f, "--quick", "--dir", tmp_path, db=db)
    assert r.returncode == 2 and r.stderr == (
        "pario: error: the plan has no point: test a runs at ranks 2 only, which quick.ranks 1 leaves out: "
        "add the test's values to [quick] or run without --quick\n"), r.stderr
    assert not db.exists()


def test_a_refused_plan_of_many_points_says_each_reason_once(tmp_path):
    """Item 7: --size 1000001 printed 72 'plan: skipping' lines before the
    one error line."""
    from test_front_end import pario

    db = tmp_path / "r.sqlite"
    r = pario("run", "ascired-api", "--quick", "--dir", tmp_path, "--size", "1000001", db=db)
    assert r.returncode == 2 and "the plan has no runnable point" in r.stderr
    assert r.stdout.splitlines() == [
        "plan: skipping 36 points (cached-posix ranks=1 block=4 KiB ...): size is not a whole number of ranks x blocks",
        "plan: skipping 36 points (cached-posix ranks=1 block=1 MiB ...): block is larger than a rank's share"]
    assert not db.exists()


def test_atomic_mode_no_lock_honoured_is_labelled_and_exported_as_what_ran(shm_dir, tmp_path):
    """Item 3: ompio's --atomic, which took no byte-range lock (the run's
    own warning says it measured relaxed I/O), was headed 'atomic (MUNIX)'
    and exported atomic=True."""
    import csv
    import io

    from test_front_end import pario

    f = tmp_path / "atom.toml"
    f.write_text('name = "atom"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\niterations = 1\n'
                 '[[test]]\nid = "ompio-atomic"\nlayout = "partitioned"\nphases = ["write"]\napi = "mpiio"\n'
                 'options = ["--mpiio-impl", "ompio", "--atomic"]\n'
                 '[[test]]\nid = "romio-atomic"\nlayout = "partitioned"\nphases = ["write"]\napi = "mpiio"\n'
                 'options = ["--mpiio-impl", "romio", "--atomic"]\n'
                 '[[figure]]\nid = "modes"\ntitle = "modes"\nx = "block"\ny = "rate"\n'
                 'series = ["mpiio_impl", "atomic"]\n')
    db = tmp_path / "r.sqlite"
    r = pario("run", f, "--dir", shm_dir, db=db)
    assert r.returncode == 0, r.stderr
    assert "ompio, atomic not honoured (relaxed)" in r.stdout and "atomic (MUNIX)" in r.stdout, r.stdout
    rows = {row["test"]: row["atomic"] for row in csv.DictReader(io.StringIO(pario("export", "1", "--csv", db=db).stdout))}
    assert rows == {"ompio-atomic": "not honoured", "romio-atomic": "True"}, rows
    # its warning's fix names the option where the user sets it (tester 22, item 3)
    assert ("use --mpiio-impl romio for locking atomic mode (--atomic, --mpiio-impl: the test's options key, "
            "in an experiment file of your own, docs/presets.md) [ompio-atomic]") in pario("show", "1", db=db).stdout


def test_a_striped_file_that_reaches_fewer_targets_says_so_in_the_terms_of_pario_run(shm_dir, tmp_path):
    """Item 4: a 1 MiB file in 1 MiB stripe units over 2 targets was headed
    '2 ways' with only the engine's warning, whose fix (--stripe-unit) pario
    run does not take, to say target 1 held nothing."""
    from test_front_end import pario

    db = tmp_path / "r.sqlite"
    r = pario("run", "ascired-api", "--quick", "--tests", "striped-posix", "--size", "1m", "--blocks", "64k",
              "--dir", shm_dir, "--iterations", "1", db=db)
    assert r.returncode == 0, r.stderr
    assert ("plan: warning: striped-posix: a shared file of 1 MiB in stripe units of 1 MiB reaches 1 of its 2 "
            "targets: the others move nothing, and its per-target rates are over the 1 that do; --size 2 MiB "
            "or more reaches every target\n") in r.stdout, r.stdout
    shown = pario("show", "1", db=db).stdout
    assert ("  - a stripe unit of 1 MiB puts each 1 MiB file on 1 of the 2 targets: target 1 moved nothing, so "
            "the per-target rates are over the 1 that did; a --size of at least 2 MiB (or a stripe_unit of at "
            "most 512 KiB in an experiment file of your own) reaches every target [striped-posix]") in shown, shown
    assert "--stripe-unit" not in shown


def test_a_left_out_figure_s_note_shows_no_raw_placeholder(shm_dir, tmp_path):
    """Item b: 'Table 2 (Aggregate write bandwidth ... ({block} requests,
    4 MiB file)) left out'."""
    from test_front_end import pario

    db = tmp_path / "r.sqlite"
    r = pario("run", "ascired-servers", "--quick", "--tests", "mpiio-coll-1agg,agg-1", "--ranks", "4", "--blocks",
              "64k,256k", "--size", "4m", "--iterations", "1", "--dir", shm_dir, "--out", tmp_path / "p", db=db)
    assert r.returncode == 0, r.stderr
    left = [l for l in r.stdout.splitlines() if "left out" in l and l.startswith("  - Table 2")]
    assert left == ["  - Table 2 (Aggregate write bandwidth by aggregators (fyods) and ranks (... requests, 4 MiB "
                    "file)) left out: its tests run at block 1 MiB only: --blocks 64k,256k leaves them out (give "
                    "--blocks with 1m)"], r.stdout


def test_a_plan_the_engine_refuses_prints_no_launcher_lines_first(tmp_path):
    """Item 7's neighbour: --direct on ascired-api printed how mpirun would
    start the ranks, then refused the plan."""
    from test_front_end import pario

    r = pario("run", "ascired-api", "--quick", "--dir", tmp_path, "--direct", db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "cannot do direct I/O: drop --direct" in r.stderr
    assert "launcher:" not in r.stdout, r.stdout


def test_a_test_quick_leaves_out_is_named_beside_other_tests_skipped_points(tmp_path):
    """Tester 22, item 1: with another test's points skipped, the test
    --quick's lists leave out went unnamed again."""
    from test_front_end import pario

    f = tmp_path / "t2.toml"
    f.write_text('name = "t2"\n[sweep]\nranks = [1, 2]\nblocks = ["4k"]\nsize = "1m"\n[quick]\nranks = [1]\n'
                 '[[test]]\nid = "a"\nlayout = "partitioned"\nphases = ["write"]\nranks = [2]\n'
                 '[[test]]\nid = "b"\nlayout = "partitioned"\nphases = ["write"]\napi = "mpiio"\naggregators = 2\n')
    r = pario("run", f, "--quick", "--dir", tmp_path, "--dry-run", db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and r.stderr.endswith(
        "; and test a runs at ranks 2 only, which quick.ranks 1 leaves out: add the test's values to [quick] "
        "or run without --quick\n"), r.stderr


def test_a_figure_of_its_reference_test_alone_is_left_out(tmp_path):
    """Item d: with only mpiio-indep run, ascired-servers drew Figures 8a-9b,
    headed '4 aggregators' and '1 aggregator', with the same independent
    numbers in each; mpiio-indep is their reference (beside), not their
    subject."""
    from test_front_end import pario

    base = ["run", "ascired-servers", "--quick", "--size", "4m", "--blocks", "256k", "--dir", tmp_path]
    r = pario(*base, "--tests", "mpiio-indep,mpiio-coll-1agg", "--dry-run", db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr
    assert ("plan: Figure 8a (Read by request size: 4 ranks, 4 aggregators (4 MiB file)) left out: only its "
            "reference test mpiio-indep is in the plan: give --tests with mpiio-coll-4agg or hdf5-coll-4agg "
            "too") in r.stdout, r.stdout
    assert "Figure 9a (" not in r.stdout  # drawn: its collective test is in the plan
    r = pario(*base, "--tests", "mpiio-indep", db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "no point of the plan is shown by a figure of ascired-servers" in r.stderr
    assert ("draw it only as a reference beside their other tests, none of which is in the plan: give --tests "
            "with mpiio-coll-4agg or hdf5-coll-4agg or mpiio-coll-1agg or hdf5-coll-1agg too") in r.stdout
    assert not (tmp_path / "r.sqlite").exists()


def test_a_striped_file_s_reach_follows_the_engine_s_split_of_size():
    """Item 4's rule on one file as the engine splits --size: the whole for
    a shared file or a broadcast's per-rank files, a rank's share else."""
    from pario.studies.io import IoPoint

    def point(layout, files):
        return IoPoint("t", "t", layout, ["read"], 2, 64 << 10, 2 << 20, files=files,
                       stripe_targets=4, stripe_unit=1 << 20)

    assert point("partitioned", "shared").stripe_reach() == (2, 4 << 20)
    assert point("partitioned", "per-rank").stripe_reach() == (1, 8 << 20)  # two 1 MiB files
    assert point("broadcast", "per-rank").stripe_reach() == (2, 4 << 20)   # each file the whole 2 MiB
