"""perf: ROMIO perf's rule (rank x size, best of 5, with and without sync),
read back and checked; MPI-IO failures end every rank with one line."""

import json
import subprocess

import pytest


def run_kernel(launcher, engine, ranks, *args, timeout=300):
    argv = launcher.command(ranks, [engine, *map(str, args)])
    return subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=timeout)


def pario_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("pario-engine: error:")]


@pytest.mark.parametrize("ranks", [1, 3])
def test_perf_writes_and_reads_every_array_and_reports_bandwidth_by_perfs_rule(launcher, engine, disk_dir,
                                                                               tmp_path, ranks):
    out = tmp_path / "p.json"
    p = run_kernel(launcher, engine, ranks, "perf", "--dir", disk_dir, "--size", "1m", "--json", out)
    assert p.returncode == 0, p.stderr
    for line in ("Write bandwidth without file sync", "Read bandwidth without prior file sync",
                 "Write bandwidth including file sync", "Read bandwidth after file sync"):
        assert line in p.stdout
    doc = json.loads(out.read_text())
    assert doc["command"] == "perf" and doc["params"]["ranks"] == ranks
    assert [x["sync"] for x in doc["passes"]] == [False, True]
    for x in doc["passes"]:
        assert len(x["write_seconds"]) == 5 and x["best_write_seconds"] == min(x["write_seconds"])
        assert x["write_mib_per_s"] == pytest.approx(ranks * 1.0 / x["best_write_seconds"])
        assert x["read_mib_per_s"] == pytest.approx(ranks * 1.0 / x["best_read_seconds"])
    assert doc["verification"]["ok"] and doc["params"]["mpi_library"]
    assert list(disk_dir.iterdir()) == []


def test_perf_keep_leaves_each_ranks_array_at_rank_times_size(launcher, engine, shm_dir):
    p = run_kernel(launcher, engine, 2, "perf", "--dir", shm_dir, "--size", "64k", "--sync", "no",
                   "--repeats", "2", "--keep")
    assert p.returncode == 0, p.stderr
    assert "including file sync" not in p.stdout
    [f] = list(shm_dir.iterdir())
    data = f.read_bytes()
    assert len(data) == 2 * 65536 and data[:65536] != data[65536:]


@pytest.mark.parametrize("args,phrase", [
    (["--size", "1m"], "--dir is required"),
    (["--dir", "DIR", "--size", "0"], "--size '0' must be greater than zero"),
    (["--dir", "DIR", "--size", "2g"], "is outside 8 B to 1 GiB"),
    (["--dir", "DIR", "--sync", "maybe"], "--sync 'maybe' is unknown"),
    (["--dir", "DIR", "--repeats", "0"], "--repeats '0'"),
    (["--dir", "/nonexistent/x"], "is not an existing directory"),
])
def test_perf_refuses_bad_input_with_one_line(launcher, engine, shm_dir, tmp_path, args, phrase):
    out = tmp_path / "p.json"
    args = [str(shm_dir) if a == "DIR" else a for a in args]
    p = run_kernel(launcher, engine, 2, "perf", *args, "--json", out)
    lines = pario_lines(p.stderr)
    assert p.returncode != 0 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert not out.exists() and list(shm_dir.iterdir()) == []


def test_perf_says_its_reads_come_from_the_page_cache_and_its_phases_are_short(disk_dir, tmp_path):
    """Tester 19: on a disk, perf 'read' at 109 GB/s came without a word,
    and its 40 µs phases got no short-phase warning (its records had no
    times), where FLASH-IO's 1 ms ones did."""
    import os
    import sys

    from conftest import ROOT

    db = tmp_path / "r.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    r = subprocess.run([sys.executable, "-m", "pario", "run", "perf", "--quick", "--ranks", "1", "--dir",
                        str(disk_dir), "--out", str(tmp_path / "plots")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    heads = {line.split(":")[0]: line for line in r.stdout.splitlines() if line.startswith(("Figure 3.", "Figure 5."))}
    assert heads["Figure 3. perf read after sync"].endswith("read back from the page cache: the sync evicts nothing")
    assert heads["Figure 5. perf write, no sync"].endswith("no sync: rates into the page cache")
    assert "short-phase: phases as short as " in r.stdout and " µs:" in r.stdout
    export = subprocess.run([sys.executable, "-m", "pario", "export", "--csv"], capture_output=True, text=True,
                            env=env, timeout=60).stdout
    assert "seconds" in export.splitlines()[0].split(",")
