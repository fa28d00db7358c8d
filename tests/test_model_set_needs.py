"""A --set of a parameter that acts only where another is set (params.py's
`needs`) is refused where that other is 0, before anything is stored
(tester 10: --set disk.interleaved_typical_read_rate on ipsc860 predicted
the same as without it, silently)."""

import csv
import io
import sqlite3

import pytest

from pario.errors import UsageError
from pario.model.machine import load_machine
from pario.model.params import PARAMS, needs_text
from pario.model.scope import check_needs, check_sets
from test_front_end import pario

VALUE = {"rate": "5MB/s", "time": "1ms", "count": "2", "size": "1m"}  # none a shipped value of its key
DEPENDENT = sorted(k for k, p in PARAMS.items() if p.needs)


def test_every_need_is_a_parameter_of_its_own():
    """Each need is kept as its alternatives (a lone parameter its own)."""
    assert DEPENDENT  # the table is not empty
    assert PARAMS["host.busy_handover"].needs == (("host.cores",), ("agent.cb_buffer",))
    assert PARAMS["host.cached_read_rate"].needs == (("host.page_cache", "agent.cb_buffer"),)
    for key in DEPENDENT:
        for alternatives in PARAMS[key].needs:
            for one in alternatives:
                assert one in PARAMS and one != key, (key, one)


@pytest.mark.parametrize("key", DEPENDENT)
def test_a_set_whose_need_is_0_is_refused_and_names_it(key):
    """Each such key on a shipped machine where a need of it is 0: refused
    in one line naming every need that is 0 (an alternative as "A or B");
    with those set too, taken."""
    p = PARAMS[key]

    def unset(machine):
        return [alts for alts in p.needs if not any(machine[n] for n in alts)]

    machine_name = next(n for n in ("ipsc860", "asci-red") if unset(load_machine(n)))
    # a value the machine does not have (its own is refused as no what-if),
    # within its relations (asci-red's read-ahead at most its prefetch of 1)
    item = f"{key}={'1' if key == 'io_node.readahead_at' else VALUE[p.kind]}"
    machine = load_machine(machine_name, [item])
    with pytest.raises(UsageError) as e:
        check_sets([], machine, "cfs")
    said = str(e.value)
    missing = unset(machine)
    named = " or ".join(missing[0]) if len(missing) == 1 else needs_text(missing)
    assert f"--set {item} does not act on machine {machine_name}: it acts only where {named} " \
        in said, said
    assert "0 there; --set " in said and ("to a non-zero value too" in said or "to non-zero values too" in said)
    # a printed machine would carry the same what-if: refused alike
    with pytest.raises(UsageError):
        check_needs(machine)
    # every need set (an alternative's first), with what their relations ask
    fill = {"io_node.cache": "1g", "host.cores": "2", "host.page_cache": "1g", "agent.cb_buffer": "16m",
            "disk.interleaved_race_requests": "4", "disk.interleaved_typical_race_requests": "4",
            "disk.share_race_restarts": "2"}
    also = {"host.page_cache": ["host.cached_read_rate=5MB/s"],
            "agent.cb_buffer": ["host.cached_read_rate=5MB/s"],
            "io_node.cache": [f"io_node.cache_block={int(machine['stripe.unit'])}"]}
    needs, todo = [], [alts[0] for alts in missing]
    while todo:  # and what those need in turn, where it is 0 here
        n = todo.pop()
        if n not in needs:
            needs.append(n)
            todo += [alts[0] for alts in PARAMS[n].needs if not any(machine[m] for m in alts)]
    extra = [f"{n}={fill.get(n, VALUE[PARAMS[n].kind])}" for n in needs]
    extra += [x for n in needs for x in also.get(n, []) if x.split("=")[0] != key]
    both = load_machine(machine_name, [item] + extra)
    check_sets([], both, "cfs")  # no refusal


def _rates(db, run_id):
    """{phase: MiB/s} of a predicted run of one point."""
    e = pario("export", str(run_id), "--csv", db=db)
    assert e.returncode == 0, e.stderr
    return {r["phase"]: float(r["rate_MiB_per_s"]) for r in csv.DictReader(io.StringIO(e.stdout))}


def test_the_typical_rate_is_refused_alone_and_acts_beside_the_rate_it_needs(tmp_path):
    """Through the real command: alone on asci-red (no
    disk.interleaved_read_rate), exit 2, one line, no run; beside it, a run
    whose two-rank interleaved reads (ranks on processors of their own: the
    typical trial's readers) go at the typical rate, below the run without
    it.  (asci-red has no I/O node cache, so the reads reach its disks.)"""
    db = tmp_path / "m.sqlite"
    plan = ["cfs", "--quick", "--tests", "interleaved", "--ranks", "2", "--blocks", "64k",
            "--size", "4m", "--machine", "asci-red"]
    r = pario("model", *plan, "--set", "disk.interleaved_typical_read_rate=0.5MB/s", db=db)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "it acts only where disk.interleaved_read_rate is non-zero" in lines[0]
    assert not db.exists() or sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    rate = ["--set", "disk.interleaved_read_rate=2MB/s"]
    assert pario("model", *plan, *rate, db=db).returncode == 0
    assert pario("model", *plan, *rate, "--set", "disk.interleaved_typical_read_rate=0.5MB/s",
                 db=db).returncode == 0
    without, typical = _rates(db, 1), _rates(db, 2)
    # the write phase is untouched; the read slower at the typical rate
    assert set(without) == set(typical) == {"write", "read"}
    assert typical["write"] == pytest.approx(without["write"])
    assert typical["read"] < 0.6 * without["read"]


def test_a_printed_machine_is_refused_the_same_what_if(tmp_path):
    """Tester 11: --print-machine wrote host.busy_handover=1ms into an
    ipsc860 file, and a prediction from that file carried the what-if while
    predicting the same as ipsc860."""
    r = pario("model", "--machine", "ipsc860", "--set", "host.busy_handover=1ms", "--print-machine",
              db=tmp_path / "m.sqlite")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(lines) == 1, (r.stdout, r.stderr)
    assert "--set host.busy_handover=1ms does not act on machine ipsc860: it acts only where " \
        "host.cores and agent.cb_buffer are non-zero" in lines[0]
    ok = pario("model", "--machine", "ipsc860", "--set", "host.cores=2", "--print-machine",
               db=tmp_path / "m.sqlite")
    assert ok.returncode == 0 and 'cores = { value = 2' in ok.stdout
