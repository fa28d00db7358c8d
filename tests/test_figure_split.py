"""A figure never pools points that differ in a parameter that is neither
its x axis nor its series (tester report 2, item 3): such a parameter
splits the figure, one per value, named in its title, and a `{param}`
placeholder is filled from the points' values."""

import os
import subprocess
import sys

from conftest import ROOT
from pario.figures import Figure, Param, Quantity, Record, build, split_varying, size_param

PARAMS = {"ranks": Param("ranks", str), "block": size_param("block"), "api": Param("api")}
QUANTITIES = {"rate": Quantity("rate", "MiB/s")}


def rec(ranks, block, rate):
    return Record({"ranks": ranks, "block": block, "api": "posix", "phase": "read"},
                  {"rate": [rate]})


def test_rank_counts_split_a_figure_by_request_size_and_are_never_pooled():
    fig = Figure(id="fig4a", title="{ranks} rank(s) reading", x="block", series="api", y="rate",
                 where={"phase": "read"})
    records = [rec(1, 4096, 10.0), rec(2, 4096, 99.0), rec(1, 65536, 20.0), rec(2, 65536, 88.0)]
    parts = split_varying(fig, records, PARAMS)
    assert [p.id for p in parts] == ["fig4a-ranks1", "fig4a-ranks2"]
    data = [build(p, records, PARAMS, QUANTITIES) for p in parts]
    assert [d.heading for d in data] == ["1 rank(s) reading", "2 rank(s) reading"]
    assert [d.best(4096, "posix") for d in data] == [10.0, 99.0]
    assert all(d.trials == 1 for d in data)  # not "best of 2": nothing pooled


def test_a_varying_parameter_without_a_placeholder_is_named_after_the_title():
    fig = Figure(id="fig3a", title="Read under load", x="ranks", series=None, y="rate")
    records = [rec(1, 1 << 20, 1.0), rec(1, 4 << 20, 2.0)]
    parts = split_varying(fig, records, PARAMS)
    assert [p.title for p in parts] == ["Read under load (block 1 MiB)", "Read under load (block 4 MiB)"]
    # a parameter that only changes from cell to cell (the x axis here) splits nothing
    assert split_varying(fig, [rec(1, 4096, 1.0), rec(2, 4096, 2.0)], PARAMS) == [fig]
    # nor do repeated rounds of one point: a cell's best-of pools them on purpose
    rounds = [rec(1, 4096, 1.0), rec(1, 4096, 2.0)]
    for i, r in enumerate(rounds):
        r.params["trial"] = i + 1
    assert split_varying(fig, rounds, PARAMS) == [fig]


def test_ascired_api_at_two_rank_counts_gives_one_figure_per_rank_count(shm_dir, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(tmp_path / "r.sqlite")}
    r = subprocess.run([sys.executable, "-m", "pario", "run", "ascired-api", "--quick", "--tests",
                        "cached-posix", "--ranks", "1,2", "--blocks", "4k", "--size", "1m",
                        "--iterations", "1", "--dir", str(shm_dir), "--out", str(tmp_path / "p")],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    heads = [l for l in r.stdout.splitlines() if l.startswith("Figure 4a")]
    assert [h.split(":")[0] for h in heads] == [   # one number never heads two figures (tester 4, item 5)
        "Figure 4a.1. 1 rank(s) reading a file of 1 MiB",
        "Figure 4a.2. 2 rank(s) reading a file of 1 MiB"]
    assert all("one trial" in h for h in heads) and "One rank" not in r.stdout
    assert sorted(os.listdir(tmp_path / "p")) == [
        "run1-fig4a-read-ranks1.png", "run1-fig4a-read-ranks2.png",
        "run1-fig4b-write-ranks1.png", "run1-fig4b-write-ranks2.png"]
