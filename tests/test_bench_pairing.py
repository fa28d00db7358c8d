"""bench/backends.py's paired turns (bench/pairing.py): the ABBA order,
the median's order-statistic interval, the row it prints, the script's
one-line refusals of bad input, and one small real pairing of fio against
pario and of fio against itself on the disk."""

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import pairing  # noqa: E402

BENCH = ROOT / "bench" / "backends.py"


def test_abba_gives_each_side_the_first_place_as_often():
    assert pairing.abba(4) == [("a", "b"), ("b", "a"), ("a", "b"), ("b", "a")]


def test_run_pairs_calls_the_sides_in_abba_order_and_keeps_each_pair_together():
    calls = []

    def side(name):
        def turn():
            calls.append(name)
            return len(calls)  # the turn's place in the sequence
        return turn

    values = pairing.run_pairs(side("a"), side("b"), 4)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert values == [(1, 2), (4, 3), (5, 6), (8, 7)]


def binomial_tail(n, k):
    """P(Binomial(n, 1/2) <= k)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def test_median_interval_is_the_widest_order_statistic_pair_holding_95_percent():
    assert pairing.median_interval([1, 2, 3, 4, 5]) is None  # 2 / 32 > 5 %: no 95 % interval
    lo, hi, cover = pairing.median_interval([6, 1, 5, 2, 4, 3])
    assert (lo, hi) == (1, 6) and cover == pytest.approx(1 - 2 / 64)
    lo, hi, cover = pairing.median_interval(range(1, 17))
    assert (lo, hi) == (4, 13) and cover == pytest.approx(1 - 2 * binomial_tail(16, 3))
    for n in range(6, 60):
        lo, hi, cover = pairing.median_interval(range(n))
        k = lo + 1  # lo is the k-th smallest
        assert hi == n - k
        assert cover >= 0.95 and cover == pytest.approx(1 - 2 * binomial_tail(n, k - 1))
        assert 1 - 2 * binomial_tail(n, k) < 0.95  # one step narrower would not hold 95 %


def test_row_prints_median_ratio_interval_range_and_wins():
    values = [(11, 10), (9, 10), (12, 10), (10, 10), (13, 10), (8, 10)]
    line = pairing.PairedTable.format_row("case", values)
    words = line.split()
    assert words[0] == "case"
    assert float(words[1]) == pytest.approx(10.5) and float(words[2]) == pytest.approx(10.0)
    assert words[3] == "1.05"  # median of 0.8 0.9 1.0 1.1 1.2 1.3
    assert words[4] == "0.80-1.30" and words[5] == "0.80-1.30"  # n = 6: the interval is the range
    assert words[6] == "4/6"
    assert "n<6" in pairing.PairedTable.format_row("case", values[:4])


BAD = [
    (["--pairs", "0"], "--pairs 0: give an even number"),
    (["--pairs", "3"], "--pairs 3: give an even number"),
    (["--pairs", "many"], "--pairs 'many' is not a whole number"),
    (["--rounds", "5"], "--rounds is gone"),
    (["--cases", "qd2"], "--cases takes a comma-separated list of qd1, qd16"),
    (["--cases", "qd1,qd1"], "--cases 'qd1,qd1' names one twice"),
    (["--control", "ior"], "--control takes a comma-separated list of fio, pario"),
    (["--only", "nfs"], "--only takes a comma-separated list of uring, memcpy, stdio"),
    (["--rand-size", "6k"], "--rand-size 6k is not a whole number of 4 KiB blocks"),
    (["--seq-size", "0"], "--seq-size '0' must be greater than zero"),
    (["--seq-size", "1536k"], "--seq-size 1536k is not a whole number of 1 MiB blocks"),
    (["--placement", "left"], "--placement 'left' is unknown"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--pario-variant", ""], "--pario-variant '' names no engine option"),
    (["--pario-variant", "'--uring-register-buffers"], "--pario-variant cannot be split into words"),
    (["--pario-variant=--uring-register-buffers", "--only", "stdio"], "add uring to --only"),
]


@pytest.mark.parametrize("args,expected", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_before_anything_is_made(tmp_path, args, expected):
    disk = tmp_path / "not-made"
    p = subprocess.run([sys.executable, str(BENCH), "--disk", str(disk), "--shm", str(disk), *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench: ") and expected in lines[0], p.stderr
    assert not disk.exists()


def test_a_disk_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "plain"
    f.write_text("mine")
    p = subprocess.run([sys.executable, str(BENCH), "--disk", str(f), "--only", "stdio"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and p.stderr.strip() == f"bench: --disk {f} is not a directory: " \
                                                     f"give a directory (made if missing)"
    assert f.read_text() == "mine"


ROW = re.compile(r"^4k randread QD16\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(n<6|[\d.]+-[\d.]+)"
                 r"\s+([\d.]+)-([\d.]+)\s+(\d)/2$")


@pytest.mark.skipif(not shutil.which("fio"), reason="fio is installed by 'make deps'")
def test_small_real_pairing_of_pario_and_fio_and_of_fio_against_itself(disk_dir):
    """Two pairs of 1 MiB turns at QD 16 (no rate is asserted: the rows must
    be real measurements, and nothing may be left in the directory)."""
    before = set(os.listdir(disk_dir))
    p = subprocess.run([sys.executable, str(BENCH), "--only", "uring", "--cases", "qd16", "--pairs", "2",
                        "--rand-size", "1m", "--control", "fio", "--disk", str(disk_dir)],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr
    rows = [ROW.match(line) for line in p.stdout.splitlines() if line.startswith("4k randread QD16")]
    assert len(rows) == 2 and all(rows), p.stdout  # pario vs fio, then fio vs fio
    for m in rows:
        a, b, ratio = float(m[1]), float(m[2]), float(m[3])
        assert a > 0 and b > 0 and m[4] == "n<6"  # two pairs: too few for a 95 % interval
        assert float(m[5]) <= ratio <= float(m[6])
    assert "control: fio io_uring against itself" in p.stdout
    assert "pario's rank bound by the launcher" in p.stdout or "unpinned" in p.stdout
    assert set(os.listdir(disk_dir)) == before
