"""`pario` end to end: plan, launch through real mpirun, store, tables,
plots; a killed or timed-out run leaves a readable database and no files."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "src"))
from pario.launch import Launcher, cores  # noqa: E402


def pario(*args, db, timeout=600, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout, **kw)


def pario_background(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.Popen([sys.executable, "-m", "pario", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


SMALL = ["--ranks", "1,2", "--blocks", "64k,1m", "--size", "4m", "--iterations", "2"]


@pytest.mark.parametrize("where", ["shm_dir", "disk_dir"])
def test_quick_cfs_run_stores_tables_and_plots(request, where, tmp_path):
    directory = request.getfixturevalue(where)
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    r = pario("run", "cfs", "--quick", "--dir", directory, *SMALL, "--out", plots, db=db)
    assert r.returncode == 0, r.stderr
    # tables in the shape of the report's figures
    assert "Partitioned Write (4 MiB file): MiB/s, best of 2" in r.stdout
    assert "Broadcast Read (4 MiB file)" in r.stdout
    assert "Grouped Interleaved (G=2) Read" in r.stdout
    assert "G=16" not in r.stdout  # quick leaves out what cannot matter at 2 ranks
    header = next(l for l in r.stdout.splitlines() if l.lstrip().startswith("ranks"))
    assert "64 KiB" in header and "1 MiB" in header

    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM runs").fetchall() == [("complete",)]
    tests = {t for (t,) in con.execute("SELECT DISTINCT test_id FROM points")}
    assert tests == {"broadcast", "partitioned", "interleaved", "partitioned-g2", "interleaved-g2"}
    assert con.execute("SELECT count(*) FROM points WHERE status='ok'").fetchone()[0] == 5 * 2 * 2
    # every write/read iteration of every point is kept, with a real rate
    n, low = con.execute("SELECT count(*), min(mib_per_s) FROM phases").fetchone()
    assert n == (4 * 2 + 1) * 2 * 2 * 2 and low > 0
    # the stored rate is the engine's bytes / seconds
    bad = con.execute("SELECT count(*) FROM phases WHERE abs(mib_per_s - bytes/1048576.0/seconds) > 1e-6 * mib_per_s").fetchone()[0]
    assert bad == 0

    pngs = sorted(p.name for p in plots.glob("*.png"))
    # one per test and phase, and one grouped-vs-ungrouped per pattern and phase
    assert len(pngs) == 9 + 4 and "run1-partitioned-write.png" in pngs
    assert "run1-interleaved-read-grouping.png" in pngs
    for p in plots.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    assert os.listdir(directory) == []

    listed = pario("list", db=db)
    assert listed.returncode == 0 and "complete" in listed.stdout and "20 ok" in listed.stdout
    shown = pario("show", "1", db=db)
    assert shown.returncode == 0 and "Interleaved Read (4 MiB file)" in shown.stdout
    replot = pario("plot", "1", "--out", tmp_path / "again", db=db)
    assert replot.returncode == 0 and len(list((tmp_path / "again").glob("*.png"))) == 13


def test_presets_lists_cfs():
    r = pario("presets", db="/dev/null")
    assert r.returncode == 0
    assert "cfs: CFS access patterns" in r.stdout and "interleaved-g16" in r.stdout


def test_dry_run_shows_the_launch_settings(shm_dir, tmp_path):
    many = cores() + 2
    r = pario("run", "cfs", "--dir", shm_dir, "--ranks", f"1,{many}", "--blocks", "64k",
              "--size", f"{many * 64}k", "--tests", "partitioned", "--dry-run", db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    launches = [l for l in lines if "pario-engine io" in l]
    assert len(launches) == 2
    assert "--oversubscribe" not in launches[0] and "--oversubscribe" in launches[1]
    if os.geteuid() == 0:
        assert any("OMPI_ALLOW_RUN_AS_ROOT=1" in l for l in lines)
    assert not (tmp_path / "r.sqlite").exists()  # a dry run stores nothing


def test_launcher_builds_argument_lists():
    t = Launcher("template", [], template=["mpiexec", "-n", "{ranks}", "{engine}", "{engine_args}"])
    assert t.command(8, ["/bin/eng", "io", "--dir", "a b"]) == ["mpiexec", "-n", "8", "/bin/eng", "io", "--dir", "a b"]
    s = Launcher("srun", ["/usr/bin/srun"])
    assert s.command(4, ["/e", "io"]) == ["/usr/bin/srun", "-n", "4", "/e", "io"]
    m = Launcher("mpirun", ["/usr/bin/mpirun"], flavour="openmpi")
    assert m.command(cores() + 1, ["/e"])[-2:] == ["--oversubscribe", "/e"]
    assert "--oversubscribe" not in m.command(1, ["/e"])


def test_user_template_runs_for_real(shm_dir, tmp_path):
    template = "mpirun --oversubscribe -np {ranks} {engine} {engine_args}"
    r = pario("run", "cfs", "--dir", shm_dir, "--ranks", "2", "--blocks", "64k", "--size", "1m",
              "--tests", "interleaved", "--iterations", "1", "--launcher-template", template,
              db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr
    assert "launcher: template" in r.stdout and "Interleaved Write" in r.stdout


def test_timeout_kills_the_ranks_records_a_failure_and_cleans_up(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--ranks", "2", "--blocks", "4k", "--size", "2g",
              "--tests", "partitioned", "--iterations", "50", "--timeout", "2", db=db)
    assert "timed out after 2 s" in r.stdout + r.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM points").fetchall() == [("failed",)]
    assert con.execute("SELECT count(*) FROM phases").fetchone()[0] == 0  # nothing half-done stored
    assert os.listdir(shm_dir) == []
    time.sleep(0.5)
    leftover = subprocess.run(["pgrep", "-f", f"pario-engine io --dir {shm_dir}"], capture_output=True)
    assert leftover.returncode != 0  # no rank survived


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_run_leaves_readable_db_marked_incomplete(shm_dir, tmp_path, sig):
    db = tmp_path / "r.sqlite"
    proc = pario_background("run", "cfs", "--dir", shm_dir, "--ranks", "1,2", "--blocks",
                            "64k,128k,256k,512k,1m", "--size", "32m", "--iterations", "3", db=db)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.3)
        if db.exists():
            try:
                if sqlite3.connect(db).execute("SELECT count(*) FROM points").fetchone()[0] >= 2:
                    break
            except sqlite3.OperationalError:
                pass
    proc.send_signal(sig)
    proc.wait(timeout=60)
    con = sqlite3.connect(db)
    stored = con.execute("SELECT count(*) FROM points WHERE status='ok'").fetchone()[0]
    assert stored >= 2
    listed = pario("list", db=db)
    assert listed.returncode == 0 and "incomplete" in listed.stdout
    shown = pario("show", db=db)
    assert shown.returncode == 0 and "incomplete" in shown.stdout
    if sig == signal.SIGTERM:
        assert con.execute("SELECT status FROM runs").fetchone()[0] == "incomplete"
        time.sleep(0.5)
        assert os.listdir(shm_dir) == []


def test_nht1_preset_measures_tc_then_tt_and_zeta(shm_dir, tmp_path):
    """Round by round: T_C, then each method handed the best T_C so far."""
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    r = pario("run", "nht1", "--quick", "--dir", shm_dir, "--ranks", "1,2", "--classes", "S",
              "--tests", "posix,collective,posix-overlap", "--iterations", "2", "--out", plots, db=db)
    assert r.returncode == 0, r.stderr
    assert "write method posix+overlap" in r.stdout and "write method collective" in r.stdout
    con = sqlite3.connect(db)
    rows = con.execute("SELECT result_json FROM points WHERE status='ok' ORDER BY id").fetchall()
    assert len(rows) == 2 * 2 * 4  # per rank count and round: T_C, then three write modes
    import json as _json
    best = {}
    for (j,) in rows:
        d = _json.loads(j)
        ranks = d["params"]["ranks"]
        if d["params"]["io"] == "none":
            best[ranks] = min(d["t_t_seconds"], best.get(ranks, float("inf")))
            continue
        assert d["t_c_seconds"] == pytest.approx(best[ranks])  # the best T_C so far, handed on
        assert d["zeta"] == pytest.approx(d["t_t_seconds"] / d["t_c_seconds"] - 1)
        assert d["verification"]["ok"] and d["verification"]["file_ok"]
    assert sorted(p.name for p in plots.glob("*.png")) == ["run1-btS-rio.png", "run1-btS-time.png",
                                                          "run1-btS-zeta.png"]
    assert os.listdir(shm_dir) == []
    shown = pario("show", "1", db=db)
    assert shown.returncode == 0 and "BT class S" in shown.stdout
