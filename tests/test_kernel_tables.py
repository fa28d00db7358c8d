"""What a kernel run's tables say under them (tester 2, 25g and 25h), on a
real FLASH-IO run at 1 and 2 ranks of the front end (one trial a point,
phases of a few milliseconds):

* a table whose cells hold one trial each has no [a-b] legend (it has no
  ranges); a table with ranges keeps it;
* no finding quotes rates its table does not hold (the time-per-file
  table shows seconds), and no cliff is read from phases too short to
  time: the short-phase finding says so instead."""

import shutil
import textwrap
import uuid
from pathlib import Path

import pytest

from test_front_end import pario

TINY = textwrap.dedent("""
    name = "flashtiny"
    kind = "flashio"
    [sweep]
    ranks = [1, 2]
    [[test]]
    id = "f"
    title = "tiny"
    figure = "Figure 7"
    transfer = "independent"
    blocks = 2
""")


@pytest.fixture(scope="module")
def flash_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flash")
    target = Path("/dev/shm") / f"pario-test-{uuid.uuid4().hex[:10]}"
    target.mkdir()
    exp = tmp / "tiny.toml"
    exp.write_text(TINY)
    db = tmp / "r.sqlite"
    try:
        r = pario("run", exp, "--dir", target, db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        assert list(target.iterdir()) == []
        yield {"db": db, "out": r.stdout, "exp": exp, "dir": target}
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_one_trial_tables_have_no_range_legend(flash_run):
    out = flash_run["out"]
    assert "Figure 7. FLASH I/O through parallel HDF5: bandwidth: rate in MiB/s, one trial" in out
    assert "FLASH I/O: time per file (slowest rank): time in s, one trial" in out
    assert "[a-b]" not in out, out
    # two trials a point: ranges in the cells, and the legend under them
    again = pario("run", flash_run["exp"], "--dir", flash_run["dir"], "--ranks", "1", "--iterations", "2",
                  db=flash_run["db"].with_name("two.sqlite"))
    assert again.returncode == 0, again.stderr
    bandwidth = again.stdout.split("Figure 7. FLASH I/O through parallel HDF5: bandwidth")[1].split("\n\n")[0]
    assert "best of 2" in bandwidth and "[a-b]: the lowest and the median of the trials" in bandwidth


def test_no_finding_from_rates_no_table_holds_nor_from_untimeable_phases(flash_run):
    """The stored run with every 2-rank rate cut to a tenth, as a cliff
    would look: still no cliff (each FLASH phase lasts milliseconds, which
    the short-phase finding names), and nothing at all under the table of
    times, which shows no rate."""
    from pario.explain import explain, point_results
    from pario.runner import run_views
    from pario.store import Store

    store = Store(flash_run["db"], readonly=True)
    _, kind, _, _, _, figures = run_views(store, 1)
    results = point_results(store, 1, kind)
    # the bandwidth sums three timed files, the plotfiles of a few ms: too short to time
    assert all(min(f["seconds"] for f in r.doc["files"]) < 0.05 for r in results)
    for r in results:
        if r.record.params["ranks"] == 2:
            r.record.values["rate"] = [v / 10 for v in r.record.values["rate"]]
    found = {e.data.figure.id: [f.rule for f in e.findings] for e in explain(figures, results)}
    store.close()
    assert set(found) == {"flashio", "flashio-files"}
    assert found["flashio-files"] == [], found
    assert "cliff" not in found["flashio"] and "short-phase" in found["flashio"], found
