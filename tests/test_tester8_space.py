"""Tester report 8, item 10: a point that does not fit names a fix the
user can apply through the command they ran (free space, an option that
command takes, or the key of an experiment file of their own), never an
engine option `pario run` refuses or cannot pass; sizes in one line in one
unit.  The same for the FLASH-IO figure's short-phase finding."""

import re

from test_front_end import pario

OWN = "in the [[test]] of an experiment file of your own (docs/presets.md)"

LAPLACE = """\
name = "small-laplace"
kind = "laplace"
[sweep]
ranks = [2]
[[test]]
id = "cb"
grid = GRID
iterations = 2
cb = "enable"
"""


def _failed_line(r, run=1):
    """The stored failure of the one point of run `run`."""
    lines = [l for l in r.stdout.splitlines() if l.startswith("failed: ")]
    assert len(lines) == 1, r.stdout
    return lines[0]


def test_perf_that_does_not_fit_names_its_sizes_key_and_sizes_in_one_unit(small_tmpfs, tmp_path):
    full = small_tmpfs("2m")
    r = pario("run", "perf", "--quick", "--dir", full, db=tmp_path / "p.sqlite", timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].endswith(f"free space on {full} or lower sizes {OWN}"), lines[0]
    assert re.search(r"but perf ranks=\d+ size=16 MiB \(round 1\) needs \d+ MiB", lines[0]), lines[0]
    assert "--size" not in lines[0] and not (tmp_path / "p.sqlite").exists()
    # the fix it names is one `pario run perf` refuses as an option
    r = pario("run", "perf", "--quick", "--size", "1m", "--dir", full, db=tmp_path / "p.sqlite")
    assert r.returncode == 2 and "--size does not apply to perf" in r.stderr


def test_a_kernel_point_on_a_full_disk_names_the_experiments_key(small_tmpfs, tmp_path):
    full = small_tmpfs("1m")
    db = tmp_path / "k.sqlite"
    r = pario("run", "sgi750", "--quick", "--tests", "laplace-cb", "--ranks", "2", "--iterations", "1",
              "--dir", full, db=db, timeout=300)
    assert r.returncode == 3, r.stderr
    line = _failed_line(r)
    assert "No space left on device" in line and line.endswith(f"free space on {full} or lower grid {OWN}")
    assert "--grid" not in line
    # and that fix works: the key lowered in a file of the user's own
    own = tmp_path / "mine.toml"
    own.write_text(LAPLACE.replace("GRID", "101"))
    r = pario("run", str(own), "--dir", full, db=db, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_bonnie_that_does_not_fit_names_its_size_key(small_tmpfs, tmp_path):
    full = small_tmpfs("1m")
    r = pario("run", "sgi750", "--quick", "--tests", "bonnie", "--iterations", "1", "--dir", full,
              db=tmp_path / "b.sqlite", timeout=300)
    assert r.returncode == 3, r.stderr
    line = _failed_line(r)
    assert re.search(rf"size [\d.]+ MiB does not fit in {re.escape(str(full))} \([\d.]+ [KM]iB free\): free "
                     rf"space there or lower size {re.escape(OWN)}$", line), line
    assert "--size" not in line


def test_the_flashio_figures_short_phases_name_what_the_user_can_raise(shm_dir, tmp_path):
    r = pario("run", "sgi750", "--quick", "--tests", "flashio", "--ranks", "1", "--iterations", "1",
              "--dir", shm_dir, db=tmp_path / "f.sqlite", timeout=300)
    assert r.returncode == 0, r.stderr
    short = [l for l in r.stdout.splitlines() if "short-phase:" in l]
    assert short, r.stdout  # a FLASH-IO point of the quick plan on tmpfs lasts a few ms
    assert all(f"; raise blocks {OWN}" in l and "--size" not in l for l in short), short
