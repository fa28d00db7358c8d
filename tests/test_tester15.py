"""Tester 15's findings about the kernels on a disk that fills: collective
MPI-IO under Open MPI's ompio hung at 4 ranks (its sync and close skip
their barrier on the rank whose write failed), where 1-2 ranks and ROMIO
failed in one line.  Driven through the real engine on a small tmpfs."""

import os
import subprocess

import pytest


@pytest.mark.parametrize("kernel", [["bt", "--class", "S", "--io", "full"],
                                    ["bt", "--class", "S", "--io", "full", "--decomposition", "slabs"],
                                    ["beff", "-T", "3", "--max-chunk", "1m"]],
                         ids=["btio-collective", "btio-slabs", "beff"])
def test_a_collective_kernel_on_a_disk_that_fills_fails_in_one_line_at_4_ranks(kernel, engine, launcher,
                                                                               small_tmpfs):
    d = small_tmpfs("512k")
    p = subprocess.run(launcher.command(4, [engine, kernel[0], "--dir", str(d), *kernel[1:]]),
                       capture_output=True, text=True, env=launcher.environment(), timeout=120)
    said = [l for l in p.stderr.splitlines() if l.startswith("pario-engine: error:")]
    assert p.returncode == 3 and len(said) == 1, p.stderr
    assert "No space left on device" in said[0] and f"free space on {d} or lower" in said[0], said
    assert os.listdir(d) == []


def test_r_io_counts_the_dumps_the_solver_writes():
    """Item 3: an I_W that does not divide N_S gave R_IO from N_S / I_W
    (8.57 dumps at I_W 7 where 9 were written; 0.06 at I_W 1000, 16 x low)."""
    from pario.studies.bt import r_io

    one_dump = 40 * 12 ** 3  # class S: N = 12, 40 bytes a point
    assert r_io(12, 60, 10, 2.0) == pytest.approx(6 * one_dump / 2.0)  # the report's formula, I_W | N_S
    assert r_io(12, 60, 7, 1.0) == pytest.approx(9 * one_dump)
    assert r_io(12, 60, 1000, 0.05) == pytest.approx(one_dump / 0.05)


def test_the_nht1_tables_zeta_lies_in_its_own_range():
    """Item 4: zeta from the printed (4-digit) times, its range from the
    raw ones: -0.029 beside [-0.030, -0.030].  (Both now from the measured
    times, as the figures: tester 19.)"""
    import random
    import re

    from pario.figures import Record
    from pario.studies.bt import KIND

    rng = random.Random(7)
    preset = {"test": [{"id": "posix", "io": "posix"}]}
    for _ in range(200):
        tc = [rng.uniform(0.04, 0.06) for _ in range(rng.choice((1, 1, 3)))]  # one run each: low = high
        tt = [x * rng.uniform(0.95, 1.02) for x in tc]

        def record(io, t):
            return Record({"test": "posix" if io != "none" else "none", "class": "S", "N": 12, "steps": 60,
                           "ranks": 1, "io": io, "method": io, "group": 0, "interval": 10}, {"t_t": [t]})
        records = [record("none", t) for t in tc] + [record("posix", t) for t in tt]
        (table,) = KIND.tables(preset, records, {})
        row = next(l for l in table.splitlines() if l.strip().startswith("12 "))
        zeta, low, high = (float(x) for x in re.search(r"(-?\d\.\d{3})\s+\[(-?\d\.\d{3}), (-?\d\.\d{3})\]",
                                                        row).groups())
        assert low <= zeta <= high, row


def test_show_and_the_report_say_a_kernels_data_was_checked(tmp_path, shm_dir):
    """Item 7: only nht1 said its runs were verified; BTIO, Laplace,
    FLASH-IO, b_eff_io and perf check their data too, and said nothing."""
    import sys

    from conftest import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    db = tmp_path / "r.sqlite"

    def pario(*args):
        return subprocess.run([sys.executable, "-m", "pario", *map(str, args), "--db", db], capture_output=True,
                              text=True, cwd=ROOT, env=env, timeout=300)

    r = pario("run", "perf", "--quick", "--dir", shm_dir, "--ranks", "1", "--out", tmp_path / "p")
    assert r.returncode == 0, r.stderr
    line = "verified: every point's data checked, and it matched"
    assert line in r.stdout, r.stdout
    assert pario("report", "1", "--out", tmp_path / "r.html").returncode == 0
    assert "every point&#x27;s data checked, and it matched" in (tmp_path / "r.html").read_text() or \
        "every point's data checked, and it matched" in (tmp_path / "r.html").read_text()
    # an io run without --verify checks nothing, and says nothing
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "1", "--blocks", "64k",
              "--size", "1m", "--iterations", "1", "--out", tmp_path / "q")
    assert r.returncode == 0 and "verified:" not in r.stdout, r.stdout
