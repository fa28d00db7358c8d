"""bench/phase_spread.py: the spread of a family's measured phases over its
points' fastest, and the first of two iterations against the second, from
kept databases opened read-only; bad inputs are one line and exit 2."""

import hashlib
import json
import sqlite3
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "bench" / "phase_spread.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def _doc(seconds, predicted=False):
    doc = {"phases": [{"name": "write", "iterations": [{"iteration": i, "seconds": s}
                                                        for i, s in enumerate(seconds)]}]}
    if predicted:
        doc["predicted"] = True
    return json.dumps(doc)


def _db(path, points):
    """A database of the columns the script reads: (kind, test, ranks,
    command, result) per point, each point its own run."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, preset TEXT, kind TEXT)")
    db.execute("CREATE TABLE points (id INTEGER PRIMARY KEY, run_id INTEGER, test_id TEXT, ranks "
               "INTEGER, block_bytes INTEGER, size_bytes INTEGER, status TEXT, command TEXT, "
               "result_json TEXT)")
    for i, (kind, test, ranks, command, result) in enumerate(points, 1):
        db.execute("INSERT INTO runs VALUES (?, 'ascired-servers', ?)", (i, kind))
        db.execute("INSERT INTO points VALUES (?, ?, ?, ?, 1048576, 33554432, 'ok', ?, ?)",
                   (i, i, test, ranks, json.dumps(command), result))
    db.commit()
    db.close()


def test_families_spread_and_first_iterations(tmp_path):
    coll = ["pario-engine", "io", "--collective"]
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    # one collective point at 4 ranks in two rounds (two databases):
    # phases 0.02, 0.01 | 0.05, 0.01 -> over the fastest 2, 1, 5, 1
    _db(a, [("io", "agg-4", 4, coll, _doc([0.02, 0.01])),
            ("probe", "probe", 2, ["pario-engine", "probe"], _doc([0.001, 0.001])),
            ("io", "agg-4", 4, coll, _doc([0.001, 0.001], predicted=True)),
            ("io", "part", 1, ["pario-engine", "io"], _doc([0.01, 0.012, 0.03]))])
    _db(b, [("io", "agg-4", 4, coll, _doc([0.05, 0.01]))])
    before = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b)]
    r = _run(a, b)
    assert r.returncode == 0, r.stderr
    lines = {line.split("  ")[0]: line for line in r.stdout.splitlines()}
    # the probe and the prediction are not measured phases: 4 phases, median 1.5x
    assert lines["collective, 2-4 ranks, write"].split()[4:8] == ["4", "1.50x", "50%", "25%"]
    # first over second iteration: 2 and 5, median 3.5, never the best
    assert lines["collective, 2-4 ranks, write"].endswith("3.50, 0 of 2")
    # three iterations: no first/second column; 1, 1.2, 3
    assert lines["other, 1 rank, write"].split()[4:8] == ["3", "1.20x", "33%", "33%"]
    assert "first" not in lines["other, 1 rank, write"]
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b)] == before


def test_bad_inputs_are_one_line(tmp_path):
    empty = tmp_path / "empty.sqlite"
    _db(empty, [("probe", "probe", 2, ["pario-engine", "probe"], _doc([0.01]))])
    not_db = tmp_path / "notes.txt"
    not_db.write_text("not a database\n")
    for args, phrase in (([], "the following arguments are required: DB"),
                         ([tmp_path / "absent.sqlite"], "no such database"),
                         ([not_db], "not a pario results database"),
                         ([empty], "hold no measured points")):
        r = _run(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert lines[0].startswith("bench: ") and phrase in lines[0], lines[0]
        assert r.stdout == ""
