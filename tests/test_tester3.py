"""Tester report 3's findings, each through the real engine and front end
on small sizes: a --dir whose file system changes mid-run, the kernels'
provenance, export's failed points and units, plot/probe --out, reports
of runs sharing no point, figure numbering and the smaller items."""

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import ROOT

ONE = ["--tests", "partitioned", "--blocks", "64k", "--size", "1m", "--iterations", "1"]


def pario(*args, db, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


@pytest.fixture
def mounted(tmp_path):
    """A tmpfs mounted on a fresh directory of /var/tmp (root only)."""
    point = Path("/var/tmp") / f"h-t3-mnt-{uuid.uuid4().hex[:8]}"
    point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "none", str(point)],
                      capture_output=True).returncode != 0:
        point.rmdir()
        pytest.skip("cannot mount a tmpfs here (not root?)")
    yield point
    subprocess.run(["umount", "-l", str(point)], capture_output=True)
    for f in point.iterdir():
        f.unlink()
    point.rmdir()


def test_a_point_on_another_file_system_than_the_runs_fails_with_both_named(mounted, tmp_path):
    # the launch of the second point lazily unmounts --dir first, as
    # `gluster.py stop` did under the tester's run: the engine then writes
    # into the bare mount-point directory on the disk below
    count = tmp_path / "count"
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                      "case \"$*\" in *--json*) n=$(cat %s 2>/dev/null || echo 0); echo $((n+1)) > %s\n"
                      "  [ \"$n\" = 1 ] && umount -l %s;; esac\n"
                      "exec mpirun --oversubscribe -np \"$@\"\n" % (count, count, mounted))
    script.chmod(0o755)
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", mounted, "--ranks", "1,2,4", *ONE,
              "--launcher-template", f"{script} {{ranks}} {{engine}} {{engine_args}}", db=db)
    assert r.returncode == 3, r.stdout + r.stderr
    con = sqlite3.connect(db)
    rows = con.execute("SELECT ranks, status, error FROM points ORDER BY id").fetchall()
    assert rows[0][1] == "ok", rows
    # the point that ran on the other file system fails; the run then stops
    # before its next one (tester 18: each later point wrote on the disk below)
    assert [s for _, s, _ in rows[1:]] == ["failed"]
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "incomplete"
    assert "is no longer on the file system the run started on" in r.stderr.splitlines()[-1]
    err = rows[1][2]
    assert "no longer on the file system the run started on (tmpfs, device " in err
    assert " -> " in err and "-> tmpfs" not in err
    assert "was it unmounted?" in err and "\n" not in err
    # nothing of the other file system is stored as this run's measurement
    assert con.execute("SELECT count(*) FROM phases p JOIN points q ON p.point_id = q.id "
                       "WHERE q.status = 'failed'").fetchone()[0] == 0



@pytest.mark.parametrize("kernel", [["perf", "--size", "64k", "--repeats", "1"],
                                    ["flashio", "--nxb", "2", "--blocks", "1"]])
def test_kernel_documents_carry_the_same_provenance_as_io(kernel, engine, launcher, shm_dir, tmp_path):
    from pario.report.build import provenance_rows
    doc_path = tmp_path / "k.json"
    argv = launcher.command(2, [engine, kernel[0], "--dir", str(shm_dir), *kernel[1:], "--json", str(doc_path)])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(doc_path.read_text())
    assert doc["target"]["fs_type"] == "tmpfs" and doc["target"]["device"] and doc["target"]["mount_point"]
    assert doc["mpi"]["ranks"] == 2 and doc["mpi"]["standard"].startswith("3.")
    assert sum(len(h["ranks"]) for h in doc["mpi"]["hosts"]) == 2
    opts = doc["target"]["mount_options"].split(",")  # item 13j: mount and super block options once
    assert len(opts) == len(set(opts)) and "rw" in opts
    run = {"id": 1, "status": "complete", "started_utc": "x", "preset": "sgi750", "argv": "[]",
           "dir": str(shm_dir), "options_json": "{}"}
    rows = dict(provenance_rows(run, [(1, {}, doc)], "1 ok"))
    assert rows["file system"].startswith("tmpfs (tmpfs") and "?" not in rows["file system"]
    assert "MPI standard 3." in rows["MPI"] and not rows["MPI"].startswith("-")


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_export_keeps_failed_points_names_units_and_says_measured_or_predicted(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    # the 2-rank point's launch fails: the sweep has a hole the export must show
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                      "[ \"$1\" = 2 ] && { echo 'launch refused on purpose' >&2; exit 1; }\n"
                      "exec mpirun --oversubscribe -np \"$@\"\n")
    script.chmod(0o755)
    r = pario("probe", "--dir", shm_dir, "--quick", "--size", "4m", "--iterations", "1", "--ranks", "1,2",
              "--launcher-template", f"{script} {{ranks}} {{engine}} {{engine_args}}", db=db)
    assert r.returncode == 3, r.stdout + r.stderr
    rows = _csv(pario("export", "1", "--csv", db=db).stdout)
    failed = [x for x in rows if x["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["ranks"] == "2" and "refused on purpose" in failed[0]["error"]
    assert failed[0]["value"] == "" and failed[0]["block_bytes"] == "1048576"
    ok = [x for x in rows if x["status"] == "ok"]
    assert ok and {x["source"] for x in rows} == {"measured"}
    units = {x["component"]: x["unit"] for x in ok}
    assert units["memory"] == "MiB/s" and units["barrier"] == "s" and "block" not in rows[0]
    as_json = json.loads(pario("export", "1", "--json", db=db).stdout)
    assert [x["status"] for x in as_json].count("failed") == 1
    # item 13g: the failed line names the test once
    show = pario("show", "1", db=db).stdout
    assert "failed: probe ranks=2 block=1 MiB: launch refused on purpose" in show, show
    # item 13k: one rank: no barrier row, and one trial says it has no spread
    assert "(barrier)" not in show and "one trial each, so no spread" in show and "best of 1" not in show
    # item 9: a probe run has no figure: `plot` says so in one line, draws nothing
    pp = tmp_path / "pp"
    r = pario("plot", "1", "--out", pp, db=db)
    assert r.returncode == 2 and r.stdout == "" and not pp.exists()
    assert r.stderr.count("\n") == 1 and "has no figures to plot" in r.stderr and "pario show 1" in r.stderr


def test_probe_out_is_refused_before_anything_runs(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    r = pario("probe", "--dir", shm_dir, "--quick", "--size", "4m", "--out", tmp_path / "pp", db=db)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--out does not apply: a probe run draws no figures" in r.stderr
    assert not db.exists() and not (tmp_path / "pp").exists()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A measured cfs run (1 rank) and a prediction of a point it did not
    run (2 ranks): two runs of one experiment that share no point."""
    tmp = tmp_path_factory.mktemp("two")
    d = Path("/dev/shm") / f"h-t3-two-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    db = tmp / "r.sqlite"
    r = pario("run", "cfs", "--dir", d, "--ranks", "1", *ONE, db=db)
    assert r.returncode == 0, r.stderr
    r = pario("model", "cfs", "--quick", "--ranks", "2", "--blocks", "64k", "--tests", "partitioned",
              "--machine", "ipsc860", db=db)
    assert r.returncode == 0, r.stderr
    d.rmdir()
    return {"db": db, "tmp": tmp}


def test_report_of_runs_sharing_no_point_shows_both_and_says_so(two_runs):
    out = two_runs["tmp"] / "both.html"
    r = pario("report", "1", "2", "--out", out, db=two_runs["db"])
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert "Runs 1 and 2 share no point" in html and 'id="run1"' in html and 'id="run2"' in html
    # compare still refuses: it has nothing to set side by side
    c = pario("compare", "1", "2", db=two_runs["db"])
    assert c.returncode == 2 and "share no point" in c.stderr


def test_report_marks_a_predicted_timeline_and_names_its_warnings_plainly(two_runs):
    out = two_runs["tmp"] / "pred.html"
    assert pario("report", "2", "--out", out, db=two_runs["db"]).returncode == 0
    html = out.read_text()
    i = html.index("Per-rank timeline of point")
    caption = html[i:html.index("</figcaption>", i)]
    assert "[predicted: model of ipsc860" in caption
    assert caption.startswith("Per-rank timeline") and "<figcaption>Figure R2-1. Per-rank timeline" in html
    # item 6: a prediction's export says so in its own column
    rows = _csv(pario("export", "2", "--csv", db=two_runs["db"]).stdout)
    assert rows and all(x["source"] == "predicted: model of ipsc860" for x in rows)
    assert rows[0]["block_bytes"] == "65536" and float(rows[0]["rate_MiB_per_s"]) > 0
    assert "Warnings from the engine" not in html


def test_timeline_legend_is_clear_of_the_axis_label():
    from pario.report.timeline import timeline_figure
    for n in (1, 2, 8, 64):
        it = {"ranks": [{"rank": r, "start_seconds": 0.0, "open_seconds": 0.001, "io_seconds": 0.01,
                         "fsync_seconds": 0.002, "close_seconds": 0.001, "total_seconds": 0.02}
                        for r in range(n)]}
        fig = timeline_figure(it, "t")
        fig.canvas.draw()
        label = fig.axes[0].xaxis.label.get_window_extent()
        legend = fig.legends[0].get_window_extent()
        assert legend.y1 <= label.y0 and legend.y0 >= 0, (n, legend, label)


def test_provenance_of_a_predicted_run_and_of_mpich_has_no_placeholders(two_runs):
    from pario.report.build import provenance_rows
    out = two_runs["tmp"] / "prov.html"
    assert pario("report", "2", "--out", out, db=two_runs["db"]).returncode == 0
    html = out.read_text()
    table = html[html.index("Provenance of run 2"):]
    table = table[:table.index("</table>")]
    assert "?" not in table and "None" not in table and "<td>-</td>" not in table, table
    assert "model:ipsc860" in table
    mpich = {"mpi": {"library": "MPICH Version:      4.0.2\nMPICH Release date: Thu May 5 2022\n"
                                "MPICH Device:       ch4:ofi\nMPICH configure:    --prefix=/usr --with-x",
                     "standard": "4.0", "ranks": 2, "hosts": []}}
    run = {"id": 3, "status": "complete", "started_utc": "x", "preset": "cfs", "argv": "[]",
           "dir": "/d", "options_json": "{}"}
    rows = dict(provenance_rows(run, [(1, {}, mpich)], "1 ok"))
    assert rows["MPI"] == "MPICH Version:      4.0.2 (MPI standard 4.0)"


def test_unnumbered_figures_are_named_apart_from_the_experiments_numbers(two_runs, shm_dir):
    import re
    db = two_runs["db"]
    # perf's read without sync has no number in the SGI 750 report (its Figures 3-5 do)
    r = pario("run", "sgi750", "--quick", "--tests", "perf", "--ranks", "1", "--dir", shm_dir, db=db)
    assert r.returncode == 0, r.stderr
    run = re.search(r"^run (\d+):", r.stdout, re.M).group(1)
    assert f"\nFigure R{run}-1. perf read, no sync" in r.stdout   # show and run name it alike
    out = two_runs["tmp"] / "num.html"
    assert pario("report", run, "--out", out, db=db).returncode == 0
    names = re.findall(r"<figcaption>(Figure [^.]+)\. ", out.read_text())
    assert f"Figure R{run}-1" in names and "Figure 3" in names, names
    assert all(re.fullmatch(rf"Figure (\d+|R{run}-\d+)", n) for n in names) and len(names) == len(set(names))


def test_show_of_a_run_stopped_before_its_first_point_says_none(shm_dir, tmp_path):
    db = tmp_path / "r.sqlite"
    script = tmp_path / "stop.sh"
    script.write_text("#!/bin/sh\ncase \"$*\" in *--json*) kill -TERM $PPID; exit 1;; esac\n"
                      "exec mpirun --oversubscribe -np \"$@\"\n")
    script.chmod(0o755)
    r = pario("run", "cfs", "--dir", shm_dir, "--ranks", "1", *ONE,
              "--launcher-template", f"{script} {{ranks}} {{engine}} {{engine_args}}", db=db)
    assert r.returncode == 130, r.stdout + r.stderr
    show = pario("show", "1", db=db).stdout
    assert "\npoints: 1 not run\n" in show, show  # stored nothing, planned one
    plot = pario("plot", "1", "--out", tmp_path / "plots", db=db)
    assert plot.returncode == 2 and plot.stderr.strip().endswith(
        "run 1 has no successful points to plot (incomplete: 1 not run): see 'pario show 1' for why"), plot.stderr


def test_kernels_print_no_zero_for_what_they_did_not_have(engine, launcher, shm_dir):
    def run(*args):
        p = subprocess.run(launcher.command(1, [engine, *args]), capture_output=True, text=True,
                           env=launcher.environment(), timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout
    # 13f: no NPB reference: "-", not a column of zeros
    bt = run("bt", "--grid", "12", "--steps", "3", "--dt", "0.5")
    rows = [l.split() for l in bt.splitlines() if l.strip()[:2] in {"1 ", "2 ", "3 ", "4 ", "5 "}]
    assert len(rows) == 5 and all(r[2] == "-" and r[4] == "-" for r in rows) and "0.0000000000000e+00" not in bt
    # 13h: a tiny mesh: its bytes and a rate with digits, never "0.0"
    flash = run("flashio", "--dir", str(shm_dir), "--nxb", "1", "--blocks", "1")
    line = next(l for l in flash.splitlines() if l.startswith("all three"))
    seconds, nbytes, rate = line.split()[2:5]
    assert int(nbytes) > 0 and float(rate) > 0 and float(rate) == pytest.approx(
        int(nbytes) / 1048576 / float(seconds), rel=2e-3)


def written_checkpoint(directory):
    try:
        return any(f.stat().st_size > 0 for f in directory.iterdir())
    except FileNotFoundError:  # listed, then gone: not ours to wait for
        return False


def test_laplace_says_its_checkpoint_is_left_behind_on_a_file_system_turned_read_only(
        engine, launcher, mounted):
    argv = launcher.command(1, [engine, "laplace", "--dir", str(mounted), "--grid", "64",
                                "--iterations", "10000000", "--checkpoint-every", "2000"])
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=launcher.environment())
    try:
        # as soon as the first checkpoint is written, the file system turns
        # read-only (a remount is refused while the checkpoint is open for
        # writing: retry).  Not as soon as the file exists: between its
        # creation and MPI's open, read-only is a --dir the run could not
        # start in (test_a_file_created_before_mpi_cannot_open_it_is_removed)
        while p.poll() is None and (not written_checkpoint(mounted) or subprocess.run(
                ["mount", "-o", "remount,ro", str(mounted)], capture_output=True).returncode != 0):
            pass
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        subprocess.run(["mount", "-o", "remount,rw", str(mounted)], capture_output=True)
    left = list(mounted.iterdir())
    assert p.returncode == 3 and len(left) == 1, (p.returncode, err)
    lines = [l for l in err.splitlines() if l.startswith("pario-engine")]  # not mpirun's own words
    assert len(lines) == 1 and "Read-only file system" in lines[0], err
    line = lines[0]
    assert f"{left[0]} is left behind (Read-only file system): remove it when the file system is " \
           "writable again" in line


@pytest.mark.parametrize("kernel", [["laplace", "--grid", "64", "--iterations", "4"],
                                    ["perf", "--size", "4096"],
                                    ["beff", "-T", "1", "--max-chunk", "64k"]])
def test_a_file_created_before_mpi_cannot_open_it_is_removed(engine, launcher, shm_dir, kernel):
    """Rank 0 creates each shared file itself, then MPI opens it: when the
    open fails (the file system turned read-only in between; here, a
    library left without its file-system driver), the run never started,
    so the line asks for another --dir and the file rank 0 made is gone
    (CI once found a laplace checkpoint left behind without a word)."""
    if launcher.flavour != "openmpi":
        pytest.skip("OMPI_MCA_fs is Open MPI's")
    env = {**launcher.environment(), "OMPI_MCA_fs": "^ufs"}
    p = subprocess.run(launcher.command(2, [engine, *kernel, "--dir", str(shm_dir)]), capture_output=True,
                       text=True, env=env, timeout=120)
    lines = [line for line in p.stderr.splitlines() if line.startswith("pario-engine")]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert lines[0].startswith(f"pario-engine: error: opening {shm_dir}/pario-{kernel[0]}.") \
        and lines[0].endswith(": check --dir"), lines
    assert list(shm_dir.iterdir()) == []
