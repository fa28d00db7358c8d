"""`pario compare` holds a point only against the same test: every plan
parameter (stripe targets, loaders, backend options, fsync/evict ...) is
in the match key, and the row label names the parameters that differ.

Real runs on tmpfs of a small experiment with a striped, a plain and a
loaded test (the ascired-api and ascired-load shapes, a few MiB)."""

import re
import sqlite3

import pytest

from test_front_end import pario

EXPERIMENT = """\
name = "compare-params"
title = "striped, plain and loaded writes"
[sweep]
ranks = [1]
blocks = ["1m"]
size = "4m"
iterations = 1
background = [0, 1]
[[test]]
id = "striped"
layout = "partitioned"
phases = ["write"]
stripe_targets = 2
background = [0]
[[test]]
id = "plain"
layout = "partitioned"
phases = ["write"]
background = [0]
[[test]]
id = "loaded"
layout = "partitioned"
phases = ["write"]
background_kind = "cpu"
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run 1 the striped and the loaded (0 and 1 loaders) tests, run 2 the plain one."""
    import shutil
    import uuid
    from pathlib import Path

    tmp = tmp_path_factory.mktemp("compare")
    toml, db = tmp / "e.toml", tmp / "r.sqlite"
    toml.write_text(EXPERIMENT)
    d = Path("/dev/shm") / f"pario-test-{uuid.uuid4().hex[:10]}"
    d.mkdir()
    try:
        for test in ("striped,loaded", "plain"):
            r = pario("run", toml, "--dir", d, "--tests", test, db=db)
            assert r.returncode == 0, r.stderr
        yield db
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_striped_is_not_held_against_unstriped(runs):
    # the same layout, phase, ranks, block, size and api: only the stripes differ
    before = sqlite3.connect(runs).execute("SELECT count(*) FROM runs").fetchone()[0]
    for a, b in (("1", "2"), ("2", "1")):
        r = pario("compare", a, b, db=runs)
        assert r.returncode == 2, r.stdout
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and f"runs {a} and {b} share no point" in lines[0], r.stderr
    assert sqlite3.connect(runs).execute("SELECT count(*) FROM runs").fetchone()[0] == before


def test_loader_counts_match_their_own_and_say_so_in_the_label(runs):
    r = pario("compare", "1", "1", db=runs)
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l.startswith(("loaded ", "striped "))]
    labels = [l.split("  ")[0] for l in rows]
    # only what tells points of one test apart: the loader count; not the
    # stripes, ranks or block that every point of a test shares
    assert labels == ["striped write", "loaded write, loaders per node 0", "loaded write, loaders per node 1"]
    assert all(" 1.00 " in l for l in rows)  # each against itself, not another loader count
    # one trial each: no noise band is claimed, and no call can be made (its chance is 1)
    assert all(re.search(r" 1\.00\s+1 trial\s+1\s+too few trials$", l) for l in rows), rows
    assert "3 matched points" in r.stdout


def test_labels_name_every_parameter_that_differs():
    """Unit level: two points differing only in a backend option (the
    stdio buffer) get two labels; matching needs the option equal."""
    from pario.analysis.compare import compare
    from pario.analysis.measured import MeasuredPoint
    from pario.studies import kind_named

    def point(buffer, rate):
        plan = {"test": "stdio", "ranks": 1, "block": 1 << 20, "api": "stdio",
                "options": ["--stdio-buffer", buffer], "iterations": 3, "title": "x"}
        return MeasuredPoint("read", 1, "1 MiB", [rate], test="stdio", plan=plan)

    got, only_a, only_b = compare([point("8k", 100), point("1m", 200)],
                                  [point("1m", 210), point("64k", 50)], kind_named("io").params)
    assert [(c.label, c.a.best, c.b.best) for c in got] == [
        ("stdio read, options --stdio-buffer 1m", 200, 210)]
    assert only_a == [("stdio", "stdio read, options --stdio-buffer 8k")]
    assert only_b == [("stdio", "stdio read, options --stdio-buffer 64k")]
