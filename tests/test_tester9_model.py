"""Tester 9's findings on `pario model` (2026-11-29): a study the model does
not predict refused before a probe's machine plans it; headings that name
the modelled machine's caches from its values (a --set page cache, a tmpfs
probe, a run stored before its document said so); a --set of
disk.read_ahead that would change nothing; the size a skipped plan blames;
the explanation's words.  Bad inputs one line, nothing stored."""

import shutil
import sqlite3

import pytest

from conftest import _fresh_dir

from pario.model import load_machine, predict_point
from pario.model.explain import _a
from pario.studies.io import IoKind, IoPoint, _heading_note
from test_front_end import pario


def _runs(db):
    return sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0] if db.exists() else 0


@pytest.fixture(scope="module")
def shm_probe(tmp_path_factory):
    """A probe of a tmpfs directory (its 'disks' are memory): run 1."""
    d = _fresh_dir("/dev/shm")
    try:
        db = tmp_path_factory.mktemp("t9") / "r.sqlite"
        r = pario("probe", "--dir", d, "--quick", "--ranks", "1", "--size", "4m", "--iterations", "1",
                  "--stream-blocks", "64k,1m", db=db)
        assert r.returncode == 0, r.stderr
        yield db
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("preset", ["bonnie", "beff", "nht1"])
def test_a_study_the_model_does_not_predict_is_one_line_with_a_probe_machine(shm_probe, preset):
    before = _runs(shm_probe)
    for extra in ([], ["--print-machine"]):
        r = pario("model", preset, "--machine", "probe:1", "--quick", *extra, db=shm_probe)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "which the model does not predict" in lines[0], r.stderr
    assert _runs(shm_probe) == before


def test_a_tmpfs_probes_prediction_says_its_file_lives_in_memory(shm_probe, tmp_path):
    r = pario("model", "cfs", "--machine", "probe:1", "--quick", "--tests", "partitioned", "--ranks", "1",
              "--blocks", "64k", "--size", "4m", "--out", tmp_path / "p", db=shm_probe)
    assert r.returncode == 0, r.stderr
    headings = [line for line in r.stdout.splitlines() if line.startswith("Figure")]
    assert len(headings) == 2
    assert headings[0].endswith("the file lives in memory: write rates are memory rates")
    assert headings[1].endswith("the file lives in memory: read rates are memory rates")


def _doc(machine, point):
    return predict_point(point, machine)


def test_headings_follow_the_machines_values_not_where_it_came_from():
    """A --set host.page_cache on a described machine is a page cache; a
    stored prediction without target.caches (before 2026-11-29) takes it
    from its machine's stored parameters."""
    p = IoPoint("t", "t", "broadcast", ["read"], 2, 1 << 20, 8 << 20, iterations=1, extra=["--evict"])
    study = IoKind()
    point = {"test_id": "t", "title": "t", "params": {}}
    cached = _doc(load_machine("asci-red", ["host.page_cache=1g", "host.cached_read_rate=1000MB/s"]), p)
    records = study.records(point, cached)
    assert records[0].params["caches"] == "page"
    assert _heading_note(records, "read") == "page cache evicted before each read"
    plain = _doc(load_machine("ipsc860"), p)
    del plain["target"]["caches"]  # as a run stored before the documents said it
    records = study.records(point, plain)
    assert records[0].params["caches"] == "io_node"
    assert "page cache" not in _heading_note(records, "read")


@pytest.mark.parametrize("args, words", [
    (["--set", "disk.read_ahead=1m", "--tests", "broadcast"],
     "--set disk.read_ahead=1m does not act on machine ipsc860: it acts only where "
     "disk.read_start_rate or disk.share_race_restarts or host.page_cache is non-zero"),
    (["--tests", "broadcast", "--blocks", "16m"],
     "check --blocks and quick.ranks and test broadcast's size (8m)"),
    (["--set", "io_node.cache=1m", "--set", "stripe.unit=2m"],
     "io_node.cache_block (4 KiB) must equal stripe.unit (2 MiB) when io_node.cache is set: "
     "--set io_node.cache_block=2m too"),
])
def test_bad_model_inputs_name_the_value_that_fails(tmp_path, args, words):
    db = tmp_path / "r.sqlite"
    r = pario("model", "cfs", "--machine", "ipsc860", "--quick", *args, db=db)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], r.stderr
    assert _runs(db) == 0


def test_a_size_is_read_aloud_with_its_article():
    assert [_a(w) for w in ("8 MiB", "16 KiB", "11 KiB", "180 KiB", "800 KiB", "1.5 MiB")] == [
        "an 8 MiB", "a 16 KiB", "an 11 KiB", "a 180 KiB", "an 800 KiB", "a 1.5 MiB"]


def test_readers_in_step_held_once_is_said_in_the_singular():
    """4 MiB calls open the largest window (8 MiB) at once: one call held."""
    m = load_machine("ipsc860", ["host.page_cache=1g", "host.cached_read_rate=1000MB/s",
                                 "disk.read_ahead=8m", "host.cores=2"])
    p = IoPoint("t", "t", "broadcast", ["read"], 2, 4 << 20, 16 << 20, iterations=1)
    text = predict_point(p, m)["phases"][0]["explanation"]["text"]
    assert "1 call that read from the disk held" in text, text



def test_compare_says_when_the_runs_caches_differ(tmp_path):
    """Tester 9, item 13: writes without fsync stop in different places on
    the two machines; compare warns of it as of a file system."""
    db = tmp_path / "r.sqlite"
    plan = ["cfs", "--machine", "ipsc860", "--quick", "--tests", "partitioned", "--ranks", "1,2",
            "--blocks", "64k", "--no-fsync", "--out", tmp_path / "p"]
    assert pario("model", *plan, db=db).returncode == 0
    assert pario("model", *plan, "--set", "io_node.cache=0", db=db).returncode == 0
    r = pario("compare", "1", "2", db=db)
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())
    assert "the runs differ in caches: run 1 the I/O nodes' caches; run 2 no cache" in said, r.stdout
    same = pario("compare", "1", "1", db=db)
    assert "differ in caches" not in same.stdout
