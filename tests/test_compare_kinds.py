"""`pario compare` on the kernels' study kinds (tester report 2, items 16,
17 and 25i: rows named by what they measured, only the parameters that
tell points apart, the "only in" points summarised, a noise band only
where trials give one) and `export --out` over its own file (25k).  The
probe's components, a group that cannot act (25j) and `pario list`'s
options (25l) are checked on the runs of test_explain_front; two
predictions on those of test_model_probed.

Real runs on tmpfs, as small as each kernel allows: one run of a small
SGI 750 suite (bonnie, perf, btio, flashio, laplace, b_eff_io), a bonnie
run of two rounds, and a run whose every point failed.  The reading
commands run in this process (no launch, no interpreter start); the rows
are checked against the numbers `pario export` gives for the same runs.
"""

import json
import re
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest

from test_front_end import pario
from pario.cli import main

SUITE = """\
name = "mini750"
kind = "suite"
title = "a small SGI 750 suite"
[sweep]
ranks = [1]
iterations = 1
[[test]]
id = "bonnie"
study = "bonnie"
figure = "Figure 1"
chunk = "8k"
size = "4m"
seeks = 100
[[test]]
id = "perf"
study = "perf"
sizes = ["256k"]
repeats = 1
[[test]]
id = "btio"
study = "btio"
subtype = "full"
classes = ["S"]
[[test]]
id = "flashio"
study = "flashio"
transfer = "independent"
blocks = 2
[[test]]
id = "laplace-cb"
study = "laplace"
grid = 64
iterations = 4
cb = "enable"
[[test]]
id = "beff"
study = "beff"
time = 4
max_chunk = "32k"
"""

BONNIE = """\
name = "minibonnie"
kind = "bonnie"
[sweep]
iterations = 2
[[test]]
id = "bonnie"
figure = "Figure 1"
chunk = "8k"
size = "4m"
seeks = 100
"""


def cli(capsys, *args, db):
    """`pario ARGS --db DB` in this process (a reading command needs no
    launch): (exit code, stdout, stderr)."""
    capsys.readouterr()
    rc = main([*map(str, args), "--db", str(db)])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """1 the suite, 2 bonnie (two rounds), 3 the suite's perf test with
    every point failed (a launcher that runs no engine)."""
    tmp = tmp_path_factory.mktemp("compare-kinds")
    db = tmp / "r.sqlite"
    d = Path("/dev/shm") / f"pario-test-{uuid.uuid4().hex[:10]}"
    d.mkdir()
    suite, bonnie = tmp / "suite.toml", tmp / "bonnie.toml"
    suite.write_text(SUITE)
    bonnie.write_text(BONNIE)
    try:
        for args in (("run", suite, "--dir", d), ("run", bonnie, "--dir", d)):
            r = pario(*args, db=db)
            assert r.returncode == 0, (args, r.stdout, r.stderr)
        r = pario("run", suite, "--dir", d, "--tests", "perf", "--launcher-template",
                  "echo {ranks} {engine} {engine_args}", db=db)
        assert r.returncode == 3, (r.stdout, r.stderr)
        assert list(d.iterdir()) == []
        yield {"db": db, "tmp": tmp, "dir": d}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _rows(stdout):
    """The table rows of a compare: (label, [cells])."""
    lines = stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("point "))
    out = []
    for l in lines[head + 1:]:
        m = re.match(r"(\S.*?)\s{2,}(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(±\d+%|1 trial|none)\s+(.+)$", l)
        if not m:
            break
        out.append((m.group(1), list(m.groups()[1:])))
    return out


def _export(capsys, db, run):
    rc, out, err = cli(capsys, "export", run, "--json", db=db)
    assert rc == 0, err
    return json.loads(out)


def test_every_suite_kind_compares_with_rows_named_by_what_they_measured(runs, capsys):
    rc, out, err = cli(capsys, "compare", 1, 1, db=runs["db"])
    assert rc == 0, err
    rows = dict(_rows(out))
    labels = list(rows)
    assert len(labels) == len(set(labels)) and len(labels) > 30
    # no raw key=value dump, no parameter every point of a test shares (study, ranks, chunk...)
    assert not any(re.search(r"=|study|figure|rank", l) for l in labels), labels
    # bonnie: one row per test of its table
    for m in ("putc", "block write", "rewrite", "getc", "block read"):
        assert rows[f"bonnie {m}"][0] == "MiB/s"
    assert rows["bonnie seeks"][0] == "/s"
    # perf's operations; btio (item 17): NPB's I/O rate and T_T
    assert {"perf write", "perf write+sync", "perf read", "perf read after sync"} <= set(rows)
    # a time in the unit that reads it (item 11 of tester 11): 23.3 ms, not 0.0233 s
    scale = {"s": 1, "ms": 1e-3}[rows["btio T_T"][0]]
    assert rows["btio NPB I/O rate"][0] == "MB/s"
    # flashio by file, laplace with its cb, beff by access method, pattern and chunk
    assert {"flashio all three", "flashio checkpoint", "flashio plot_centers", "flashio plot_corners"} <= set(rows)
    assert "laplace-cb checkpoint, cb on" in rows
    assert "beff b_eff_io" in rows and "beff write, all patterns" in rows
    for pattern in ("scatter", "shared", "separate", "segmented", "seg-coll"):
        assert f"beff read, pattern {pattern}" in rows
        for chunk in ("1 KiB", "1 KiB+8", "32 KiB"):
            assert f"beff rewrite, pattern {pattern}, chunk {chunk}" in rows
    # one trial each: no noise band claimed, no verdict either, and the footnote says why
    assert all(cells[4] == "1 trial" and cells[3] == "1.00" and cells[5].split() == ["1", "too", "few", "trials"]
               for cells in rows.values()), out
    assert "with 1 trial on a side cannot be called" in " ".join(out.split()) and "±" not in out
    # the numbers are the stored ones (export of the same run)
    rows_of = _export(capsys, runs["db"], 1)
    getc = [x["rate_MiB_per_s"] for x in rows_of if x.get("measure") == "getc"]
    assert float(rows["bonnie getc"][1]) == pytest.approx(max(getc), abs=0.06)
    npb = [x["npb_mbps"] for x in rows_of if x["study"] == "btio"]
    assert float(rows["btio NPB I/O rate"][1]) == pytest.approx(max(npb), abs=0.006)
    tt = [x["t_t_s"] for x in rows_of if x["study"] == "btio"]
    assert float(rows["btio T_T"][1]) * scale == pytest.approx(min(tt), rel=1e-3)
    # export names each row's measure as compare does
    assert {x["quantity"] for x in rows_of if x["study"] == "perf"} == {
        "write", "write+sync", "read", "read after sync"}


def test_a_kind_run_matches_the_suite_and_pools_its_rounds(runs, capsys):
    # bonnie (two rounds) against the suite's bonnie test: the same six rows
    rc, out, err = cli(capsys, "compare", 2, 1, db=runs["db"])
    assert rc == 0, err
    rows = dict(_rows(out))
    assert sorted(rows) == sorted(f"bonnie {m}" for m in
                                  ("putc", "block write", "rewrite", "getc", "block read", "seeks"))
    assert "6 matched points" in out
    # the suite's other points: counted per test and wrapped, never a wall
    only = out.split("only in run 1: ")[1].replace("\n    ", " ")
    m = re.match(r"(\d+) rows, of tests (.*?); e\.g\. perf \w", only)
    assert m, only
    counts = {t: int(n) for t, n in re.findall(r"(\S+) \((\d+)\)", m.group(2))}
    # perf: 4 operations; btio: its rate and T_T; flashio: 4 files; beff: b_eff_io, then
    # per access method its mean and 5 patterns, each also at 3 chunk sizes
    assert counts == {"perf": 4, "laplace-cb": 1, "flashio": 4, "beff": 1 + 3 * (1 + 5 + 5 * 3), "btio": 2}
    assert int(m.group(1)) == sum(counts.values())
    assert all(len(l) <= 100 for l in out.splitlines() if "only in" in l or l.startswith("    "))
    # two rounds on each side: a noise band from them, and A is the best of both rounds
    rc, out, err = cli(capsys, "compare", 2, 2, db=runs["db"])
    rows = dict(_rows(out))
    assert all(re.fullmatch(r"±\d+%", cells[4]) for cells in rows.values()), out
    writes = [x["rate_MiB_per_s"] for x in _export(capsys, runs["db"], 2) if x["measure"] == "block_write"]
    assert len(writes) == 2 and float(rows["bonnie block write"][1]) == pytest.approx(max(writes), abs=0.06)
    assert "noise ±N%: the wider spread" in out and "1 trial" not in out


def _runs_in(db):
    return sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


@pytest.mark.parametrize("a, b", [(1, 3), (3, 1)])
def test_a_run_without_a_successful_point_is_refused_in_one_line(runs, capsys, a, b):
    before = _runs_in(runs["db"])
    rc, out, err = cli(capsys, "compare", a, b, db=runs["db"])
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert "run 3 has no successful, verified point to compare: see 'pario show 3'" in err
    assert _runs_in(runs["db"]) == before


def test_export_out_may_write_again_over_its_own_file_only(runs, capsys):
    out_file = runs["tmp"] / "e.csv"
    for _ in range(2):
        rc, _, err = cli(capsys, "export", 2, "--csv", "--out", out_file, db=runs["db"])
        assert rc == 0, err
    assert out_file.read_text() == cli(capsys, "export", 2, "--csv", db=runs["db"])[1]
    # changed since pario wrote it: no longer pario's to replace
    out_file.write_text(out_file.read_text() + "a note of mine\n")
    rc, _, err = cli(capsys, "export", 2, "--csv", "--out", out_file, db=runs["db"])
    assert rc == 2 and "already exists and is not a file this results database recorded writing there" in err
    assert out_file.read_text().endswith("a note of mine\n")
    # nor a file of the user's that pario never wrote
    mine = runs["tmp"] / "mine.csv"
    mine.write_text("mine\n")
    rc, _, err = cli(capsys, "export", 2, "--json", "--out", mine, db=runs["db"])
    assert rc == 2 and "already exists" in err and mine.read_text() == "mine\n"
    # every option says what it does
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    h = " ".join(capsys.readouterr().out.split())
    for text in ("--csv comma-separated values", "--json a JSON array", "--out OUT the file to write",
                 "an earlier 'pario export --out' wrote", "--db DB results database holding the run"):
        assert text in h, (text, h)
