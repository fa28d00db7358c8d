"""`pario model`: a predicted run stored in the engine's shape, shown as
predicted, and every bad invocation answered with one line, nothing stored."""

import json
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROOT
from pario.cli import main


def _pario(tmp_path, *args):
    env = {"PARIO_DB": str(tmp_path / "r.sqlite"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "pario", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_model_stores_a_predicted_run_that_list_and_show_mark(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    rc = main(["model", "cfs", "--machine", "ipsc860", "--quick", "--tests", "partitioned",
               "--ranks", "1,2,64", "--blocks", "64k", "--set", "io_node.cache=2000k", "--db", db,
               "--out", str(tmp_path / "plots")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "[predicted: model of ipsc860 --set io_node.cache=2000k]" in out
    assert "model: what bounded each point" in out and "busy disks" in out
    assert len(list((tmp_path / "plots").glob("*.png"))) == 2
    rows = sqlite3.connect(db).execute("SELECT ranks, result_json FROM points ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [1, 2, 64]
    for ranks, text in rows:
        doc = json.loads(text)
        assert doc["predicted"] is True and doc["schema"] == "pario.result/1"
        assert doc["mpi"]["ranks"] == ranks
        assert [p["name"] for p in doc["phases"]] == ["write", "read"]
        it = doc["phases"][1]["iterations"][0]
        assert len(it["ranks"]) == ranks and it["bytes"] == 32 << 20
        assert doc["model"]["machine"]["overrides"] == {"io_node.cache": "2000k"}
    assert main(["list", "--db", db]) == 0
    assert "predicted: model of ipsc860" in capsys.readouterr().out
    assert main(["show", "--db", db]) == 0
    assert "[predicted: model of ipsc860" in capsys.readouterr().out


@pytest.mark.parametrize("args, words", [
    (["cfs", "--machine", "cray-1"], "machine 'cray-1' is unknown: use one of asci-red, ipsc860"),
    (["cfs"], "pario model needs --machine"),
    (["--machine", "ipsc860"], "pario model needs an experiment"),
    (["cfs", "--machine", "ipsc860", "--set", "io_node.cahce=5MB"], "'io_node.cahce' is not a model parameter"),
    (["cfs", "--machine", "ipsc860", "--set", "io_node.cache=five"], "is not a valid size"),
    (["cfs", "--machine", "ipsc860", "--set", "io_node.cache"], "must be key=value"),
    (["cfs", "--machine", "ipsc860", "--evict"], "--evict acts on real files"),
    (["cfs", "--machine", "ipsc860", "--cached"], "--cached acts on real files"),
    (["cfs", "--machine", "ipsc860", "--no-prealloc"], "--prealloc/--no-prealloc acts on real files"),
    (["nht1", "--machine", "ipsc860"], "kind bt, which the model does not predict"),
    (["nosuch", "--machine", "ipsc860"], "preset 'nosuch' is unknown"),
    (["cfs", "--machine", "ipsc860", "--ranks", "0"], "--ranks"),
    (["cfs", "--machine", "ipsc860", "--blocks", "3x"], "--blocks entry '3x'"),
    (["cfs", "--machine", "ipsc860", "--tests", "spiral"], "--tests spiral unknown"),
])
def test_bad_model_invocations_are_one_line_and_store_nothing(tmp_path, args, words):
    r = _pario(tmp_path, "model", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    db = tmp_path / "r.sqlite"
    if db.exists():
        assert sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_model_parameters_lists_the_table(tmp_path):
    r = _pario(tmp_path, "model", "--parameters")
    assert r.returncode == 0
    assert "io_node.cache " in r.stdout and "agent.mode" in r.stdout
    # a parameter that acts only beside another says so on its line
    line = next(x for x in r.stdout.splitlines() if x.startswith("host.busy_handover "))
    assert line.endswith("[acts only with host.cores and agent.cb_buffer set]")


def test_predicted_figures_say_predicted_in_every_title_never_best_of(tmp_path, capsys):
    """One figure description behind every table and plot: a model's run
    has no trials to take the best of, nor a spread to draw."""
    from pario.plot import draw_figure
    from pario.runner import run_views
    from pario.store import Store

    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    assert main(["model", "cfs", "--machine", "ipsc860", "--quick", "--tests", "partitioned",
                 "--ranks", "1,2", "--blocks", "64k", "--iterations", "3", "--db", str(db)]) == 0
    capsys.readouterr()
    *_, figures = run_views(Store(db, create=False, readonly=True), 1)
    assert figures and all(d.trials == 3 for d in figures)  # the model's iterations: three values
    for d in figures:
        ax = draw_figure(d).axes[0]
        assert "best of" not in ax.get_title() + ax.get_ylabel()
        assert "predicted" in ax.get_title() and "predicted" in ax.get_ylabel()
        assert not ax.containers  # no error bars: a prediction has no spread
        assert d.trials_text == "predicted" and d.heading.endswith("[predicted: model of ipsc860]")
    assert main(["plot", "1", "--db", str(db), "--out", str(plots)]) == 0
    out = capsys.readouterr().out
    assert "best of" not in out and "[predicted: model of ipsc860]" in out
    assert len(list(plots.glob("*.png"))) == len(figures)


@pytest.mark.parametrize("sets, flags, write_note, read_note", [
    ([], ["--no-fsync"], "no fsync: rates into the I/O nodes' caches",
     "no client cache; the I/O nodes' caches are not emptied before a read"),
    (["--set", "io_node.cache=0"], ["--no-fsync"],
     "no fsync, but the modelled machine has no cache: rates to storage", "no cache: reads from the disks"),
    (["--set", "io_node.cache=0"], [], "fsync before close: rates to storage",
     "no cache: reads from the disks"),
])
def test_predicted_headings_name_the_modelled_machines_caches(tmp_path, capsys, sets, flags,
                                                              write_note, read_note):
    """A modelled machine without a host page cache (the iPSC/860's compute
    nodes had none): its headings name where an unsynced write stops and
    what a read may find, not this host's page cache."""
    db = str(tmp_path / "r.sqlite")
    assert main(["model", "cfs", "--machine", "ipsc860", "--quick", "--tests", "partitioned",
                 "--ranks", "1", "--blocks", "64k", "--db", db, "--out", str(tmp_path / "p"),
                 *sets, *flags]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line.startswith("Figure")]
    assert len(headings) == 2, out
    assert headings[0].endswith(write_note) and headings[1].endswith(read_note)
    assert "page cache" not in "".join(headings)
