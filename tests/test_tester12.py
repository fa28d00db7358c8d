"""Tester 12's findings, each through the real command line: standard
output on a disk that fills up (an export cut short with exit 0, a run
stored whole but said to be "nothing stored"), compare's numbers (p and
ratios in scientific notation or as 0.00, a wrong count of trials), a
database made for a run a signal stopped before it began, a plot folder
left empty by a refusal, and a scratch file's name in a --db error."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

ASCI_RED = ROOT / "src/pario/model/machines/asci-red.toml"
SMALL_CFS = ["--tests", "partitioned", "--ranks", "1", "--blocks", "64k", "--size", "1m"]


def pario(*args, db, stdout=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], stdout=stdout or subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env, timeout=300)


@pytest.fixture
def nearly_full(small_tmpfs):
    """A 64 KiB tmpfs with 4 KiB left (root only): a disk that fills up."""
    point = small_tmpfs("64k")
    (point / "fill").write_bytes(b"\0" * 60 * 1024)
    return point


def test_an_export_onto_a_disk_that_fills_up_is_refused_not_cut_short(nearly_full, tmp_path):
    """Item 1: Python's buffered writer wrote 8 KiB of 87 and dropped the
    rest without a word; the export exited 0."""
    db = tmp_path / "r.sqlite"
    assert pario("model", "cfs", "--quick", "--machine", ASCI_RED, db=db,
                 stdout=subprocess.DEVNULL).returncode == 0
    assert len(pario("export", "1", "--csv", db=db).stdout) > 16384  # more than the disk holds
    for fmt in ("--csv", "--json"):
        with open(nearly_full / f"out{fmt}", "w") as out:
            r = pario("export", "1", fmt, db=db, stdout=out)
        assert r.returncode == 2 and r.stderr == (
            "pario: error: cannot write to standard output: No space left on device: free space or send "
            "the output elsewhere\n"), r.stderr
        (nearly_full / f"out{fmt}").unlink()


def test_output_that_fails_after_the_run_is_stored_says_so_and_exits_with_the_runs_status(nearly_full,
                                                                                            tmp_path):
    """Item 7: a model run stored whole exited 2 ("nothing stored") when
    its tables found the disk full."""
    db = tmp_path / "r.sqlite"
    with open(nearly_full / "tables.txt", "w") as out:
        r = pario("model", "cfs", "--quick", "--machine", ASCI_RED, db=db, stdout=out)
    assert r.returncode == 4, r.stderr
    assert r.stderr.splitlines()[-1] == (
        "pario: error: cannot write to standard output (No space left on device): run 1 is stored, "
        "complete: see it with 'pario show 1' where there is room"), r.stderr
    assert "complete  2026-" in pario("list", db=db).stdout


def test_a_plot_folder_made_for_plots_that_could_not_be_written_goes_again(nearly_full, tmp_path):
    """Item 9: `plot --out` onto a full disk left the empty folder it made."""
    db = tmp_path / "r.sqlite"
    assert pario("model", "cfs", "--quick", "--machine", ASCI_RED, *SMALL_CFS, db=db,
                 stdout=subprocess.DEVNULL).returncode == 0
    r = pario("plot", "1", "--out", nearly_full / "plots", db=db)
    assert r.returncode == 2 and "No space left on device" in r.stderr, r.stderr
    assert sorted(p.name for p in nearly_full.iterdir()) == ["fill"]


def test_a_database_made_for_a_run_a_signal_stopped_before_it_began_goes_with_it(tmp_path):
    """Item 6: SIGTERM between the database's making and the run's first
    row left the new, empty database; one that was there before stays."""
    from pario.stopping import Stopped, end_early
    from pario.store import Store

    new = tmp_path / "new.sqlite"
    assert end_early(Store(new), None, Stopped("SIGTERM")) == 130
    assert not new.exists()
    old = tmp_path / "old.sqlite"
    Store(old).close()
    assert end_early(Store(old), None, Stopped("SIGTERM")) == 130
    assert old.exists()


def test_compare_prints_no_p_or_ratio_as_a_power_of_ten_or_as_zero(tmp_path, shm_dir):
    """Items 4 and 5: `p 1.1e-05`; a model 1000 times off read 0.00."""
    from pario.compare_runs import _ratio
    from pario.units import format_value

    assert [_ratio(x) for x in (0.0011, 0.004, 1.234, 0.0)] == ["0.0011", "0.0040", "1.23", "0.00"]
    assert format_value(1.1e-05, ".2g") == "0.000011" and format_value(0.33, ".2g") == "0.33"
    db = tmp_path / "r.sqlite"
    assert pario("run", "cfs", "--dir", shm_dir, *SMALL_CFS, "--iterations", "1", "--out", tmp_path / "p",
                 db=db).returncode == 0
    assert pario("model", "cfs", "--machine", ASCI_RED, *SMALL_CFS, "--iterations", "1", "--out",
                 tmp_path / "q", db=db).returncode == 0
    r = pario("compare", "1", "2", db=db)
    assert r.returncode == 0, r.stderr
    rows = [l.split() for l in r.stdout.splitlines() if l.startswith("partitioned ")]
    # ASCI Red's model against memory: a ratio far below 1, shown, never as 0.00
    ratios = [float(x[x.index("yes" if "yes" in x else "no") - 1]) for x in rows]
    assert rows and all(0 < q < 0.05 for q in ratios), r.stdout
    assert "e-0" not in r.stdout and "e+" not in r.stdout


def test_a_db_that_cannot_be_made_is_named_without_pario_s_scratch_file(tmp_path, shm_dir):
    """Item 9: '/proc/.x.sqlite.ywxanx2g.pario-new' in the one line."""
    r = pario("run", "cfs", "--quick", "--dir", shm_dir, *SMALL_CFS, "--db", "/proc/x.sqlite", db=tmp_path / "d")
    assert r.returncode == 2 and r.stderr.splitlines()[-1] == (
        "pario: error: --db /proc/x.sqlite: cannot open the results database (No such file or directory): "
        "choose a writable path"), r.stderr


def test_export_value_columns_say_their_unit_once_in_letters():
    """Item 9: seeks__per_s, cpu_%, npb_io_s_s, npb_mbps_MB_per_s."""
    from pario.runs import value_column

    assert [value_column(*x) for x in (("seeks", "/s"), ("cpu", "%"), ("npb_io_s", "s"), ("npb_mbps", "MB/s"),
                                       ("npb_io_pct", "%"), ("npb_mb", "MB"), ("t_t", "s"),
                                       ("rate", "MiB/s"), ("seconds", "s"), ("r_io", "bytes/s"))] == [
        "seeks_per_s", "cpu_pct", "npb_io_s", "npb_mbps", "npb_io_pct", "npb_mb", "t_t_s",
        "rate_MiB_per_s", "seconds", "r_io_bytes_per_s"]
