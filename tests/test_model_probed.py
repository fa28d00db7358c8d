"""The machine `pario probe` measured, through `pario model --machine
probe:RUN`, held against a real run: every parameter cited, predictions
stored and marked, `compare` and `report` showing measured against
predicted, and the bad inputs each one line with nothing stored.

Small real runs on the disk (/var/tmp): a probe at three stream call sizes,
one measured CFS test, its prediction.  Whether the predictions are within
25 % is bench/model_local.py's question, not a unit test's."""

import itertools
import json
import re
import shutil
import sqlite3
import tomllib
import uuid
from pathlib import Path

import pytest

from conftest import ROOT
from pario.model.machine import load_machine
from pario.model.params import PARAMS
from pario.model.read_start import first_window
from pario.studies.probe import device_request_bytes
from test_front_end import pario

PLAN = ["--quick", "--tests", "partitioned", "--ranks", "1,2", "--blocks", "64k,1m", "--size", "4m"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run 1 a probe, 2 a measured CFS test, 3 its prediction from run 1,
    4 a prediction of another experiment, 5 a probe of one call size."""
    tmp = tmp_path_factory.mktemp("probed")
    db = tmp / "r.sqlite"
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else ROOT / "build"
    d = base / f"pario-test-{uuid.uuid4().hex[:10]}"
    d.mkdir(parents=True)
    try:
        steps = [
            ("probe", "--dir", d, "--quick", "--ranks", "2", "--size", "4m", "--iterations", "2",
             "--stream-blocks", "4k,64k,1m"),
            ("run", "cfs", "--dir", d, *PLAN, "--iterations", "2"),
            ("model", "cfs", *PLAN, "--machine", "probe:1"),
            ("model", "ascired-shared", "--quick", "--ranks", "2", "--blocks", "64k", "--size", "4m",
             "--tests", "shared-relaxed", "--machine", "ipsc860"),
            ("probe", "--dir", d, "--quick", "--ranks", "1", "--size", "4m", "--iterations", "1"),
        ]
        out = {"db": db, "tmp": tmp, "dir": d}
        for i, args in enumerate(steps, 1):
            r = pario(*args, db=db)
            assert r.returncode == 0, r.stderr
            out[i] = r
        assert list(d.iterdir()) == []
        yield out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_probe_measures_the_stream_at_each_call_size(runs):
    con = sqlite3.connect(runs["db"])
    blocks = [r[0] for r in con.execute("SELECT block_bytes FROM points WHERE run_id=1 ORDER BY id")]
    assert blocks == [4096, 65536, 1 << 20]  # 1 MiB last: the peak other runs draw
    for (text,) in con.execute("SELECT result_json FROM points WHERE run_id=1"):
        doc = json.loads(text)
        assert doc["components"]["stream_write"]["block_bytes"] == doc["params"]["block_bytes"]
    table = runs[1].stdout
    for size in ("4 KiB", "64 KiB", "1 MiB"):
        assert f"storage, one stream write (preallocated, fsync), {size} calls" in table
        assert f"storage, one stream read (cache kept out), {size} calls" in table
        assert f"storage, one stream read again (in the page cache), {size} calls" in table
        assert f"MPI messages of one call's size, rank 1 to 0, {size} calls" in table
        assert f"storage, two streams read at once (ranks 0, 1; cache kept out), {size} calls" in table
        assert f"storage, two streams written at once (ranks 0, 1; fsync), {size} calls" in table
        assert f"storage, one stream write into a new file (no space reserved, fsync), {size} calls" in table
        assert f"storage, two interleaved readers (ranks 0, 1; every other block), {size} calls" in table
        assert f"storage, four readers at once (ranks 0, 1; two threads each), {size} calls" in table
        assert f"storage, two readers of the same bytes (ranks 0, 1; each all of it), {size} calls" in table
    for size in ("4 KiB", "64 KiB"):  # a 4 MiB stream's eighth is no whole 1 MiB call
        assert f"storage, the stream's last eighth read (cache kept out), {size} calls" in table
    assert "storage, the stream's last eighth read (cache kept out), 1 MiB calls" not in table
    ahead = (json.loads(con.execute("SELECT result_json FROM points WHERE run_id=1").fetchone()[0])
             ["components"].get("read_ahead") or {}).get("max_bytes")
    assert ("the device's largest read-ahead window (read_ahead_kb)" in table) == bool(ahead)
    counted = device_request_bytes(json.loads(con.execute(
        "SELECT result_json FROM points WHERE run_id=1").fetchone()[0])["components"]["stream_read"])
    assert ("device read requests at 4 KiB calls (median of trials): one stream" in table) == bool(counted)
    for row in ("token hand-over, ring of all ranks", "token hand-over, a yielding thread beside each rank",
                "token hand-over, ranks 0 and 1 on one core",
                "collective MPI-IO write call, 1 byte per rank", "collective MPI-IO read call, 1 byte per rank",
                "byte-range lock and unlock (fcntl)"):
        assert row in table


def test_probed_machine_cites_the_probe_for_every_parameter(runs, tmp_path):
    r = pario("model", "--machine", "probe:1", "--print-machine", db=runs["db"])
    assert r.returncode == 0, r.stderr
    data = tomllib.loads(r.stdout)
    flat = {f"{s}.{k}": e for s, t in data.items() if isinstance(t, dict) for k, e in t.items()}
    assert set(flat) == set(PARAMS)
    assert all(e["source"] for e in flat.values())
    # the measured ones name the probe run and its table row
    for key in ("disk.rate", "disk.overhead", "disk.write_rate", "disk.write_overhead",
                "agent.copy_rate", "network.token_latency", "file.open_close_read",
                "file.open_close_write", "network.token_latency_crowded",
                "host.cached_read_rate", "host.cached_read_overhead",
                "agent.message_rate", "agent.message_overhead", "client.collective_overhead",
                "client.collective_write_overhead", "disk.shared_read_rate",
                "disk.shared_write_rate", "disk.files_write_rate", "disk.files_write_overhead",
                "disk.read_latency", "disk.read_start_rate",
                "disk.read_start_limit",
                "disk.alloc_write_rate",
                "disk.alloc_write_overhead", "disk.interleaved_read_rate",
                "disk.interleaved_read_overhead", "disk.interleaved_typical_read_rate",
                "disk.interleaved_typical_read_overhead", "disk.four_read_rate", "disk.same_read_rate",
                "disk.four_interleaved_read_rate", "disk.four_interleaved_read_overhead",
                "file.lock_overhead", "disk.buffer_write_rate",
                "disk.shared_buffer_write_rate", "disk.buffer_read_rate", "disk.shared_buffer_read_rate",
                "disk.four_buffer_read_rate", "client.mpiio_open_close"):
        assert "probe run 1" in flat[key]["source"] and "Table" in flat[key]["source"], key
    for key in ("host.cores", "host.page_cache"):  # the host the probe ran on
        assert "probe run 1" in flat[key]["source"] and "mpi.hosts" in flat[key]["source"], key
    assert "probe run 1" in flat["agent.cb_buffer"]["source"]
    assert "4 KiB calls" in flat["disk.write_rate"]["source"]
    # where the probe counted the device's requests, the readers' rates say how read-ahead cut them
    counted = [json.loads(t)["components"] for (t,) in sqlite3.connect(runs["db"]).execute(
        "SELECT result_json FROM points WHERE run_id=1")]
    assert ("the device's read requests over the pass" in flat["disk.interleaved_read_rate"]["source"]) == \
        any(device_request_bytes(c["two_interleaved"]) and device_request_bytes(c["stream_read"])
            for c in counted)
    # the numbers are the probe's: the 1 MiB stream's time is rebuilt within the fit's scatter
    con = sqlite3.connect(runs["db"])
    docs = [json.loads(t) for (t,) in con.execute("SELECT result_json FROM points WHERE run_id=1")]
    m = load_machine(_write(tmp_path, r.stdout))
    # the read's fixed start: per call size the line through the last eighth's
    # time and the whole stream's, at 0 bytes, less open/close; then the line
    # through those starts against the call size (read_start.py)
    starts = sorted((c["stream_read"]["block_bytes"],
                     (S * t - s * T) / (S - s) - m["file.open_close_read"])
                    for S, T, s, t, c in ((c["stream_read"]["bytes"], c["stream_read"]["seconds"]["best"],
                                           c["stream_read_short"]["bytes"],
                                           c["stream_read_short"]["seconds"]["best"], c)
                                          for c in (d["components"] for d in docs)
                                          if c["stream_read_short"]))
    assert len(starts) == 2  # 4 MiB: an eighth is whole 4 KiB and 64 KiB calls, not 1 MiB ones
    (b0, s0), (b1, s1) = starts
    # on a device with a read-ahead window the line is against the first
    # window each call size opens (read_start.py), else against the call
    ra = m["disk.read_ahead"]
    doc_ra = (docs[0]["components"].get("read_ahead") or {}).get("max_bytes") or 0
    assert ra == doc_ra
    if ra:
        assert "read_ahead_kb" in m.sources["disk.read_ahead"] and "probe run 1" in m.sources["disk.read_ahead"]
    at = (lambda b: first_window(b, ra)) if ra else (lambda b: b)
    slope = (s1 - s0) / (at(b1) - at(b0))
    if slope > 0:  # the start grows with the call: the line through both, up to 64 KiB
        assert m["disk.read_start_rate"] == pytest.approx(1 / slope, rel=1e-3)
        assert m["disk.read_start_limit"] == b1 == 64 << 10
        assert m["disk.read_latency"] == pytest.approx(max(0.0, s0 - slope * at(b0)), rel=1e-3, abs=1e-8)
    else:  # noise: no growth, the median start
        assert m["disk.read_start_rate"] == 0 and "noise" in m.sources["disk.read_start_rate"]
        assert m["disk.read_latency"] == pytest.approx(max(0.0, (s0 + s1) / 2), rel=1e-3, abs=1e-8)
    latency = m["disk.read_latency"]

    def start_at(b):
        if "was taken off every call size" in m.sources["disk.rate"]:  # a noisy short read
            return max(0.0, (s0 + s1) / 2)
        x = at(min(b, 64 << 10))  # the probe's own fits stay within its starts' data
        return latency + (x / m["disk.read_start_rate"] if m["disk.read_start_rate"] else 0.0)
    for which, rate, over, oc, start in (
            ("stream_write", "disk.write_rate", "disk.write_overhead", "file.open_close_write", 0),
            ("stream_write_new", "disk.alloc_write_rate", "disk.alloc_write_overhead",
             "file.open_close_write", 0),
            ("stream_read", "disk.rate", "disk.overhead", "file.open_close_read", start_at),
            ("stream_read_cached", "host.cached_read_rate", "host.cached_read_overhead",
             "file.open_close_read", 0)):
        times = {d["components"][which]["block_bytes"]: d["components"][which]["seconds"]["best"]
                 for d in docs}
        size = 4 << 20
        rebuilt = {b: size // b * m[over] + size / m[rate] + m[oc] + (start(b) if start else 0)
                   for b in times}
        if m[over] > 0:
            # a least-squares line through the three times: its residuals sum to 0
            # (up to the 4 to 6 digits the file writes)
            assert sum(rebuilt.values()) == pytest.approx(sum(times.values()), rel=2e-3)
        else:  # more calls took less time: noise, said so
            assert "noise" in m.sources[over]
    assert m["stripe.count"] == 1 and m["io_node.cache"] == 0 and m["agent.count"] == 0
    assert m["network.link_rate"] == 0  # no network: one host
    # the messages' line likewise: time = messages x per message + bytes x per byte
    msgs = {d["components"]["messages"]["block_bytes"]: d["components"]["messages"] for d in docs}
    rebuilt = [x["bytes"] // b * m["agent.message_overhead"] + x["bytes"] / m["agent.message_rate"]
               for b, x in msgs.items()]
    if m["agent.message_overhead"] > 0:
        assert sum(rebuilt) == pytest.approx(sum(x["seconds"]["best"] for x in msgs.values()), rel=2e-3)
    # the host, the token and the collective call: the probe's own figures,
    # each the best of one point's trials that every point's trials expect
    # (tester 3, item 5; every pick of a point's number of trials from all of
    # them, brute force here)
    main = next(d for d in docs if d["params"]["block_bytes"] == 1 << 20)
    host, c = main["mpi"]["hosts"][0], main["components"]

    def best(get, pick=min):
        each = [get(d["components"])["values"] for d in docs]
        picks = list(itertools.combinations([v for vals in each for v in vals], len(each[0])))
        return sum(pick(p) for p in picks) / len(picks)

    assert m["host.cores"] == host["cores"] and m["host.page_cache"] == host["memory_bytes"]
    assert m["network.token_latency"] == pytest.approx(best(lambda c: c["token_pass"]["seconds"]), rel=1e-3)
    # ranks above the cores: the hand-over with both ranks on one core,
    # timed as the slope between two rings
    assert all(d["components"]["token_pass"]["shared_core_timing"] == "slope" for d in docs)
    assert m["network.token_latency_crowded"] == pytest.approx(
        best(lambda c: c["token_pass"]["shared_core_seconds"]), rel=1e-3)
    assert "ranks 0 and 1 on one core" in m.sources["network.token_latency_crowded"]
    assert m["client.collective_overhead"] == pytest.approx(
        best(lambda c: c["collective_mpiio"]["read_seconds"]), rel=1e-3)
    assert m["client.collective_write_overhead"] == pytest.approx(
        best(lambda c: c["collective_mpiio"]["write_seconds"]), rel=1e-3)
    assert m["file.open_close_read"] == pytest.approx(
        best(lambda c: c["open_read_byte_close_seconds"]), rel=1e-3)
    assert m["file.open_close_write"] == pytest.approx(
        best(lambda c: c["open_write_byte_close_seconds"]), rel=1e-3)
    slowest = [min(d["components"]["memory_copy"]["per_rank_best_mib_per_s"]) for d in docs]
    assert m["agent.copy_rate"] <= max(slowest) * (1 << 20) * (1 + 1e-4)
    assert m["agent.copy_rate"] >= min(slowest) * (1 << 20) * (1 - 1e-4)
    assert m["agent.cb_buffer"] == (c["collective_mpiio"]["cb_buffer_size"] or 16 << 20)
    assert m["file.lock_overhead"] == pytest.approx(best(lambda c: c["byte_range_lock_seconds"]), rel=1e-3)
    assert m["client.mpiio_open_close"] == pytest.approx(
        best(lambda c: c["collective_mpiio"]["open_close_seconds"]), rel=1e-3)
    # the streams in collective-buffer calls: bytes over the best time less open/close
    # (and the read's fixed start); the probe's 4 MiB stream makes them 2 MiB calls
    b = c["buffer_streams"]
    assert b["call_bytes"] == 2 << 20 and b["bytes"] == 4 << 20
    assert b["four_call_bytes"] == 1 << 20  # four readers: a quarter each, in one call
    for key, rate, fixed in (("write_seconds", "disk.buffer_write_rate", m["file.open_close_write"]),
                             ("two_writers_seconds", "disk.shared_buffer_write_rate",
                              m["file.open_close_write"]),
                             ("read_seconds", "disk.buffer_read_rate", m["file.open_close_read"] + latency),
                             ("two_readers_seconds", "disk.shared_buffer_read_rate",
                              m["file.open_close_read"] + latency),
                             ("four_readers_seconds", "disk.four_buffer_read_rate",
                              m["file.open_close_read"] + latency)):
        # Table 2's rate rows: the rate a point's number of trials expects at best
        rate_best = best(lambda c: {"values": [c["buffer_streams"]["bytes"] / (1 << 20) / t
                                               for t in c["buffer_streams"][key]["values"]]}, max)
        seconds = b["bytes"] / (1 << 20) / rate_best
        assert m[rate] == pytest.approx(b["bytes"] / (seconds - fixed), rel=2e-3), rate


def _write(tmp_path, text):
    p = tmp_path / "probed.toml"
    p.write_text(text)
    return str(p)


def test_prediction_is_stored_with_the_probed_machine(runs):
    con = sqlite3.connect(runs["db"])
    run = con.execute("SELECT dir, launcher FROM runs WHERE id=3").fetchone()
    assert run == ("predicted: model of probe:1", "model")
    docs = [json.loads(t) for (t,) in con.execute("SELECT result_json FROM points WHERE run_id=3")]
    assert len(docs) == 4  # 1 and 2 ranks x 64 KiB and 1 MiB
    for d in docs:
        assert d["predicted"] is True
        params = d["model"]["machine"]["parameters"]
        assert set(params) == set(PARAMS)
        assert params["disk.write_rate"]["source"].startswith("probe run 1")
        assert all(ph["summary"]["best_mib_per_s"] > 0 for ph in d["phases"])


def _rates(db, run_id):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT p.ranks, p.block_bytes, f.phase, max(f.mib_per_s) FROM phases f "
                       "JOIN points p ON p.id = f.point_id WHERE p.run_id=? "
                       "GROUP BY p.id, f.phase", (run_id,)).fetchall()
    return {(r[0], r[1], r[2]): r[3] for r in rows}


def test_compare_shows_measured_against_predicted_either_way(runs):
    a = pario("compare", "2", "3", db=runs["db"])
    b = pario("compare", "3", "2", db=runs["db"])
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout
    out = a.stdout
    assert out.startswith("Measured against PREDICTED: run 2 (cfs")
    assert "predicted: model of probe:1" in out
    measured, predicted = _rates(runs["db"], 2), _rates(runs["db"], 3)
    size = {65536: "64 KiB", 1 << 20: "1 MiB"}
    rows = [l for l in out.splitlines() if l.startswith("partitioned ")]
    assert len(rows) == 8
    for (ranks, block, phase), m in measured.items():
        label = f"partitioned {phase}, {ranks} rank{'s' if ranks > 1 else ''}, block {size[block]}"
        [row] = [l for l in rows if l.startswith(label + " ")]
        cells = row[len(label):].split()
        p = predicted[(ranks, block, phase)]
        assert float(cells[0]) == pytest.approx(m, abs=0.06)
        assert float(cells[1]) == pytest.approx(p, abs=0.06)
        assert float(cells[2]) == pytest.approx(p / m, abs=0.006)
        assert cells[3] == ("yes" if abs(p / m - 1) <= 0.25 else "no")
        assert cells[4] in ("disk", "latency", "io_link", "rank_link", "io_node", "backplane", "cpu",
                            "read_start", "token")
    inside = sum(r.split()[-2] == "yes" for r in rows)
    assert f"8 matched points: {inside} ({inside / 8:.0%}) predicted within 25%" in out


def test_two_predictions_are_compared_without_noise(runs):
    """Tester report 2, item 25i: a prediction has no noise, so no band and
    no "same within noise"; equal predictions are "equal"."""
    r = pario("compare", "3", "3", db=runs["db"])
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l.startswith("partitioned ")]
    assert len(rows) == 8
    assert all(re.search(r" MiB/s\s+[\d.]+\s+[\d.]+\s+1\.00\s+none\s+equal$", l) for l in rows), rows
    assert "±" not in r.stdout and "within noise" not in r.stdout
    assert "8 matched points: 0 faster, 0 slower, 8 equal" in r.stdout
    assert "both runs are predictions: a model has no noise" in r.stdout


def test_report_holds_the_comparison_marked_predicted(runs):
    path = runs["tmp"] / "both.html"
    r = pario("report", "2", "3", "--out", path, db=runs["db"])
    assert r.returncode == 0, r.stderr
    text = path.read_text()
    assert "Measured run 2 against PREDICTED run 3" in text
    assert "[PREDICTED: model of probe:1]" in text
    assert "PREDICTED: predicted" not in text
    assert text.count("<td class=\"text\">partitioned ") >= 8
    assert "predicted within 25%" in text
    # a report of the measured run alone has no such section
    alone = runs["tmp"] / "alone.html"
    assert pario("report", "2", "--out", alone, db=runs["db"]).returncode == 0
    assert "against PREDICTED" not in alone.read_text()


def _probe_edited(runs, tmp_path, edit):
    """A copy of the database whose probe (run 1) has every point's
    components passed through edit(components), as an older probe would
    have recorded them."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    for pid, text in con.execute("SELECT id, result_json FROM points WHERE run_id=1").fetchall():
        doc = json.loads(text)
        edit(doc["components"])
        con.execute("UPDATE points SET result_json=? WHERE id=?", (json.dumps(doc), pid))
    con.commit()
    con.close()
    return db


def _probe_machine(db):
    """The machine pario makes of the probe (run 1) of database `db`."""
    from pario.model.probed import machine_from_probe
    from pario.store import Store

    store = Store(db, create=False)
    try:
        return machine_from_probe(store, 1)
    finally:
        store.close()


def _edited_machine(runs, tmp_path, edit):
    """The machine pario makes of the probe (run 1) as edit(components)
    leaves it."""
    return _probe_machine(_probe_edited(runs, tmp_path, edit))


def _probe_without(runs, tmp_path, *rows):
    """A copy of the database whose probe (run 1) lacks these component
    rows, as a probe made before they existed."""
    def edit(components):
        for row in rows:
            components.pop(row, None)
    return _probe_edited(runs, tmp_path, edit)


def _count_runs(db):
    return sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


@pytest.mark.parametrize("args,phrase", [
    (["model", "cfs", "--quick", "--machine", "probe:99"], "run 99 is not in"),
    (["model", "cfs", "--quick", "--machine", "probe:2"], "not a probe"),
    (["model", "cfs", "--quick", "--machine", "probe:3"], "predicted by the model, not measured"),
    (["model", "cfs", "--quick", "--machine", "probe:x"], "give a probe run's id"),
    (["model", "cfs", "--quick", "--machine", "probe:\u0661"], "give a probe run's id"),  # tester 22, 8
    (["model", "cfs", "--quick", "--machine", "probe:5"], "at 1 call size(s)"),
    (["model", "cfs", "--quick", "--machine", "probe:1", "--set", "disk.rate=0"], "disk.rate must be"),
    (["compare", "2", "4"], "compare a run with the prediction of the same experiment"),
    (["compare", "2", "3", "--fail-below", "0.9"], "--fail-below compares two measured runs"),
    (["probe", "--dir", "DIR", "--stream-blocks", "3k"], "a call size must be a multiple of 4k"),
    (["probe", "--dir", "DIR", "--quick", "--stream-blocks", "128m"], "divides the stream"),
    # one call size twice would run once and lose its size in Table 2 (tester 2, 25r)
    (["probe", "--dir", "DIR", "--quick", "--stream-blocks", "4k,4k"], "'4k,4k' repeats 4k"),
    (["probe", "--dir", "DIR", "--quick", "--stream-blocks", "4k,4096"],
     "--stream-blocks 4k,4096 repeats 4k (as 4096): give each value once"),
])
def test_bad_inputs_are_one_line(runs, args, phrase):
    before = _count_runs(runs["db"])
    args = [str(runs["dir"]) if a == "DIR" else a for a in args]
    r = pario(*args, db=runs["db"])
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and phrase in lines[0], r.stderr
    assert _count_runs(runs["db"]) == before


def test_probe_machine_needs_an_existing_database(tmp_path):
    r = pario("model", "cfs", "--machine", "probe:1", db=tmp_path / "none.sqlite")
    assert r.returncode == 2 and "no results database" in r.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_collective_aggregators_are_agents_that_copy():
    """--aggregators N with --collective: N agents; a copy rate slows each
    call by size / rate on its agent; independent MPI-IO has no agents."""
    from pario.model import load_machine, predict_point
    from pario.studies.io import IoPoint

    def point(aggregators, options):
        return IoPoint("t", "t", "partitioned", ["write"], 4, 1 << 20, 16 << 20, api="mpiio",
                       iterations=1, options=options, aggregators=aggregators)

    # one disk behind one server, no cache, no network, no fixed costs
    base = ["network.link_rate=0", "network.latency=0s", "io_node.cache=0", "stripe.unit=1g",
            "stripe.count=1", "io_node.count=1", "io_node.memory_rate=0", "io_node.request_overhead=0s",
            "file.open_close_write=0s", "disk.write_overhead=0s", "disk.write_rate=1000MB/s"]
    plain = load_machine("ipsc860", base)
    copying = load_machine("ipsc860", base + ["agent.copy_rate=1000MB/s"])
    coll = ["--collective", "--mpiio-impl", "romio"]
    one = predict_point(point(1, coll), copying)["phases"][0]
    assert one["iterations"][0]["model"]["counters"]["agents"] == 1
    assert one["explanation"]["bound"] == "agent"
    # one agent holds each call for its copy and its disk write: 2 x 1 ms per MiB
    assert one["summary"]["best_mib_per_s"] == pytest.approx(500, rel=0.02)
    four = predict_point(point(4, coll), copying)["phases"][0]
    assert four["iterations"][0]["model"]["counters"]["agents"] == 4
    assert four["summary"]["best_mib_per_s"] > one["summary"]["best_mib_per_s"] * 1.5
    indep = predict_point(point(0, ["--mpiio-impl", "romio"]), copying)["phases"][0]
    assert indep["iterations"][0]["model"]["counters"]["agents"] == 0
    no_copy = predict_point(point(1, coll), plain)["phases"][0]
    assert no_copy["summary"]["best_mib_per_s"] == pytest.approx(1000, rel=0.02)


def test_atomic_mode_locks_each_call():
    """--atomic on a machine with byte-range locks (file.lock_overhead):
    every call pays one lock and unlock on its rank, and no rank waits for
    another's lock (their ranges differ)."""
    from pario.model import load_machine, predict_point
    from pario.studies.io import IoPoint

    def rate(options, sets):
        base = ["network.link_rate=0", "network.latency=0s", "io_node.cache=0", "stripe.unit=1g",
                "stripe.count=1", "io_node.count=1", "io_node.memory_rate=0",
                "io_node.request_overhead=0s", "file.open_close_write=0s", "disk.write_overhead=0s",
                "disk.write_rate=1000MB/s", "host.cores=0"]
        p = IoPoint("t", "t", "partitioned", ["write"], 2, 1 << 20, 16 << 20, api="mpiio",
                    iterations=1, options=options)
        doc = predict_point(p, load_machine("ipsc860", base + sets))
        return doc["phases"][0]["iterations"][0]["seconds"]

    # the MPI-IO library's open and close: once per rank and phase, side by side
    opened = rate(["--mpiio-impl", "romio"], ["client.mpiio_open_close=2ms"])
    assert opened == pytest.approx(rate(["--mpiio-impl", "romio"], []) + 0.002, rel=1e-6)
    relaxed = rate(["--mpiio-impl", "romio"], ["file.lock_overhead=1ms"])
    atomic = rate(["--mpiio-impl", "romio", "--atomic"], ["file.lock_overhead=1ms"])
    # 16 calls of 1 ms each at 1000 MB/s on one disk: 16 ms; each rank's 8
    # locks add 1 ms before each of its calls, side by side with the other's
    # disk time, so the phase grows by less than 16 locks' time
    assert relaxed == pytest.approx(0.016, rel=0.01)
    assert relaxed < atomic < relaxed + 0.016
    assert rate(["--mpiio-impl", "romio", "--atomic"], ["file.lock_overhead=0s"]) == \
        pytest.approx(relaxed, rel=1e-9)


def _copy_db(runs, tmp_path):
    db = tmp_path / "copy.sqlite"
    shutil.copy(runs["db"], db)
    return db


def test_model_leaves_out_what_it_does_not_model_and_keeps_the_rest(runs, tmp_path):
    """ascired-api on a probed host: striped, stdio-buffered and cached
    tests left out with one line each; the rest stored with the same
    fsync/evict/stripe/loader parameters a measured run would show."""
    import csv
    import io

    db = _copy_db(runs, tmp_path)
    r = pario("model", "ascired-api", "--quick", "--ranks", "1", "--blocks", "1m",
              "--machine", "probe:1", db=db)
    assert r.returncode == 0, r.stderr
    left = {l.split(" of test ")[1].split(",")[0]: l for l in r.stdout.splitlines()
            if l.startswith("plan: leaving out")}
    assert "stripe_targets=2" in left["striped-posix"] and "--tests without striped-posix" in left["striped-posix"]
    assert "--stdio-buffer" in left["large-stdio-8k"] and "--stdio-buffer" in left["large-stdio-1m"]
    assert "--no-fsync" in left["cached-posix"] and "evict=false" in left["cached-posix"]
    assert len(left) == 13
    run_id = sqlite3.connect(db).execute("SELECT max(id) FROM runs").fetchone()[0]
    e = pario("export", str(run_id), "--csv", db=db)
    assert e.returncode == 0, e.stderr
    rows = list(csv.DictReader(io.StringIO(e.stdout)))
    assert sorted({row["test"] for row in rows}) == ["large-hdf5", "large-mmap", "large-mpiio",
                                                     "large-posix", "large-uring"]
    assert {(row["fsync"], row["evict"], row["stripe_targets"], row["background"]) for row in rows} == {
        ("True", "True", "0", "0")}
    # the loaded points of ascired-load likewise, and then the unloaded ones
    # too: loaders are all that preset varies (tester 5, item 6), so one
    # line, exit 2, nothing stored
    before = _count_runs(db)
    r = pario("model", "ascired-load", "--quick", "--size", "4m", "--machine", "probe:1", db=db)
    assert r.returncode == 2, r.stdout
    assert [l.split(": background=")[1].split(":")[0] for l in r.stdout.splitlines()
            if l.startswith("plan: leaving out")] == ["2,4", "2,4"]
    assert "which is all test write-load varies" in r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and "measure it with 'pario run'" in r.stderr
    assert _count_runs(db) == before


def test_a_preset_the_model_cannot_predict_at_all_is_one_line(runs, tmp_path):
    db = _copy_db(runs, tmp_path)
    before = _count_runs(db)
    r = pario("model", "ascired-api", "--quick", "--tests", "striped-posix,cached-mmap",
              "--machine", "probe:1", db=db)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "the model predicts no point of" in lines[0], r.stderr
    assert "leaving out 1 point(s) of test striped-posix" not in r.stdout  # quick: 4 blocks
    assert "of test striped-posix" in r.stdout and "of test cached-mmap" in r.stdout
    assert _count_runs(db) == before


def _drop(key):
    def edit(c):
        del c[key]
    return edit


def _set(path, value):
    """Every trial of a row (its best too) set to `value`: the machine
    reads the best of every point's trials, as the tables show it."""
    def edit(c):
        for k in path:
            c = c[k]
        c["best"] = value
        c["values"] = [value] * len(c["values"])
    return edit


def _no_time(c):
    m = c["messages"]  # the 64 KiB messages in no time, every trial (the model takes the
    if m["block_bytes"] == 65536:  # best of the measured run's trials from them)
        m["seconds"]["best"] = 0
        m["seconds"]["values"] = [0.0] * len(m["seconds"]["values"])


def _short_longer(c):
    if c["stream_read_short"]:
        c["stream_read_short"]["bytes"] = c["stream_read"]["bytes"]


def test_a_probe_before_the_four_and_same_readers_still_predicts(runs, tmp_path):
    """A probe made before the four readers' and the same bytes' rows (the
    quiet databases of issue 12) still makes a machine: those two parts at
    their neutral 0, the source saying why."""
    db = _probe_without(runs, tmp_path, "four_streams", "two_same")
    m = _probe_machine(db)
    for key in ("disk.four_read_rate", "disk.same_read_rate"):
        assert m[key] == 0 and "not measured" in m.sources[key], key


@pytest.mark.parametrize("row,label,rate,overhead,kept", [
    # every quiet database of issue 12 before stop 22: writers of their own
    # files take the shared write rate
    ("two_files", "two writers of a file each", "disk.files_write_rate", "disk.files_write_overhead",
     "disk.shared_write_rate"),
    # every one before stop 27: four or more interleaved readers take the
    # two interleaved readers' rate
    ("four_interleaved", "four interleaved readers", "disk.four_interleaved_read_rate",
     "disk.four_interleaved_read_overhead", "disk.interleaved_read_rate"),
])
def test_a_probe_before_a_fitted_row_still_predicts(runs, tmp_path, row, label, rate, overhead, kept):
    """A probe made before a row whose call sizes give a rate and a
    per-call cost makes a machine with both at 0, the source saying why,
    and the rate they fall back on as measured; the probe that has the row
    gives both from a fit of its call sizes."""
    measured = _probe_machine(runs["db"])
    assert measured[rate] > 0 and label in measured.sources[rate]
    assert "us per call" in measured.sources[overhead]
    db = _probe_without(runs, tmp_path, row)
    m = _probe_machine(db)
    assert m[rate] == 0 and "not measured" in m.sources[rate]
    assert m[overhead] == 0 and "unused" in m.sources[overhead]
    assert m[kept] == measured[kept]


def test_two_writers_that_synced_on_their_own_give_no_shared_write_rate(runs, tmp_path):
    """The probe's two buffer writers fsync after both have written, as a
    collective write's sync follows every aggregator's writes, and say so
    (buffer_streams.two_writers_sync); a probe before that (the quiet
    databases of issue 12) let each fsync on its own, an order a collective
    never has: its row sets no shared write rate (0: the one writer's),
    and the source says why.  The readers' rate is kept."""
    from pario.model.probed import machine_from_probe
    from pario.store import Store

    docs = [json.loads(t) for (t,) in sqlite3.connect(runs["db"]).execute(
        "SELECT result_json FROM points WHERE run_id=1")]
    assert {d["components"]["buffer_streams"]["two_writers_sync"] for d in docs} == \
        {"after every writer's writes"}
    store = Store(runs["db"], create=False)
    try:
        assert machine_from_probe(store, 1)["disk.shared_buffer_write_rate"] > 0
    finally:
        store.close()

    def edit(components):
        del components["buffer_streams"]["two_writers_sync"]
    m = _edited_machine(runs, tmp_path, edit)
    assert m["disk.shared_buffer_write_rate"] == 0
    assert "each fsynced as soon as its own writes were done" in m.sources["disk.shared_buffer_write_rate"]
    assert m["disk.buffer_write_rate"] > 0 and m["disk.shared_buffer_read_rate"] > 0


def test_a_probe_before_the_four_buffer_readers_gives_four_aggregators_the_two_readers_rate(
        runs, tmp_path):
    """The probe's four buffer readers (ranks 0 and 1 with a thread each, a
    quarter each) give disk.four_buffer_read_rate; a probe before that row
    (every kept quiet database before stop 24) sets it 0, saying why, and
    four aggregators then read at the two readers' rate."""
    measured = _probe_machine(runs["db"])
    assert measured["disk.four_buffer_read_rate"] > 0
    assert "four readers at once" in measured.sources["disk.four_buffer_read_rate"]
    assert "in 1 MiB calls" in measured.sources["disk.four_buffer_read_rate"]

    def edit(components):
        del components["buffer_streams"]["four_readers_seconds"]
        del components["buffer_streams"]["four_call_bytes"]
    m = _edited_machine(runs, tmp_path, edit)
    assert m["disk.four_buffer_read_rate"] == 0
    assert "a probe before its four buffer readers" in m.sources["disk.four_buffer_read_rate"]
    assert m["disk.shared_buffer_read_rate"] == measured["disk.shared_buffer_read_rate"]


def test_a_probe_without_the_read_ahead_record_fits_the_start_against_the_call(runs, tmp_path):
    """A probe made before the read-ahead record (the quiet databases of
    issue 12): disk.read_ahead 0, the start's line against the call as
    before; --set disk.read_ahead gives the device's window (a fact the
    older probe did not record) and the line is then fitted against the
    first windows, the source saying both."""
    from pario.model.probed import machine_from_probe
    from pario.store import Store

    db = _probe_without(runs, tmp_path, "read_ahead")
    store = Store(db, create=False)
    try:
        old = machine_from_probe(store, 1)
        told = machine_from_probe(store, 1, ["disk.read_ahead=128k"])
    finally:
        store.close()
    assert old["disk.read_ahead"] == 0 and "before the read-ahead record" in old.sources["disk.read_ahead"]
    assert told["disk.read_ahead"] == 128 << 10 and "--set" in told.sources["disk.read_ahead"]
    if told["disk.read_start_rate"]:  # a start that grows: fitted against the windows
        assert "first read-ahead window" in told.sources["disk.read_start_rate"]
        assert "first window" not in old.sources["disk.read_start_rate"]


@pytest.mark.parametrize("dropped", ["shared_core_seconds", "shared_core_timing"])
def test_a_probe_without_the_one_core_hand_over_takes_the_yielding_threads_ring(runs, tmp_path, dropped):
    """A probe made before the row with ranks 0 and 1 on one core, or one
    that timed that ring whole, in the scheduler's ticks (the quiet
    databases of issue 12): the crowded hand-over is the ring beside
    yielding threads, as before, and its source says why."""
    thread = []

    def edit(components):
        token = components["token_pass"]
        if token:
            thread.append(token["crowded_seconds"]["values"])
            del token[dropped]
    old = _edited_machine(runs, tmp_path, edit)
    # the best of one point's trials that all points' trials expect, as every pooled row
    from pario.studies.probe import expected_best
    assert old["network.token_latency_crowded"] == pytest.approx(
        expected_best([v for vals in thread for v in vals], len(thread[0]), "min"), rel=1e-3)
    assert "older probe" in old.sources["network.token_latency_crowded"]


@pytest.mark.parametrize("edit,phrase", [
    (_drop("stream_read_cached"), "has no cached stream read row"),
    (_drop("stream_write_new"), "has no stream write into a new file row"),
    (_drop("stream_read_short"), "has no short stream read row"),
    (_short_longer, "is not a shorter read"),
    (_drop("two_streams"), "has no two streams at once row"),
    (_drop("two_writers"), "has no two streams written at once row"),
    (_drop("two_interleaved"), "has no two interleaved readers row"),
    (_drop("collective_mpiio"), "has no collective MPI-IO call row"),
    (_drop("token_pass"), "has no token hand-over row"),
    (_drop("messages"), "has no MPI messages row"),
    (_set(("token_pass", "crowded_seconds"), 0), "token hand-over times"),
    (_set(("collective_mpiio", "write_seconds"), -1e-5), "collective MPI-IO write call took"),
    (_set(("collective_mpiio", "read_seconds"), None), "collective MPI-IO read call took"),
    (_no_time, "its MPI messages took no time"),
])
def test_a_probe_without_good_rows_is_refused_as_a_machine(runs, tmp_path, edit, phrase):
    """A probe made before these rows existed, or with a value no machine can
    have: one line naming the row and the fix, exit 2, nothing stored."""
    db = _probe_edited(runs, tmp_path, edit)
    before = _count_runs(db)
    r = pario("model", "cfs", *PLAN, "--machine", "probe:1", db=db)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and phrase in lines[0] and "probe run 1" in lines[0], r.stderr
    assert "pario probe" in lines[0]
    assert _count_runs(db) == before


def test_an_incomplete_probe_is_refused_as_a_machine(runs, tmp_path):
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET status='incomplete' WHERE id=1")
    con.commit()
    before = _count_runs(db)
    r = pario("model", "cfs", *PLAN, "--machine", "probe:1", db=db)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "probe run 1 is incomplete" in lines[0] and "pario probe" in lines[0], r.stderr
    assert _count_runs(db) == before


def test_messages_without_time_per_byte_fall_back_to_the_largest(runs, tmp_path):
    """Small messages slower per message than the line allows (a busy
    machine): the largest messages' own time per byte, no cost per message,
    and the source says so."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    for pid, text in con.execute("SELECT id, result_json FROM points WHERE run_id=1").fetchall():
        doc = json.loads(text)
        m = doc["components"]["messages"]
        m["seconds"]["best"] = 1.0 if m["block_bytes"] == 4096 else 0.002
        con.execute("UPDATE points SET result_json=? WHERE id=?", (json.dumps(doc), pid))
    con.commit()
    r = pario("model", "--machine", "probe:1", "--print-machine", db=db)
    assert r.returncode == 0, r.stderr
    msg = tomllib.loads(r.stdout)["agent"]
    assert msg["message_overhead"]["value"] == "0us"
    assert float(msg["message_rate"]["value"].removesuffix("MB/s")) == pytest.approx(4 / 0.002, rel=1e-4)
    assert "left no time per byte" in msg["message_rate"]["source"]


def _table_row(text, caption, label):
    """(best, spread, trials) of a row of a probe table in `pario show`'s text."""
    table = text.split(caption)[1].split("\n\n")[0]
    line = next(l for l in table.splitlines() if l.strip().startswith(label))
    return line[line.index(label) + len(label):].split()


def test_tables_take_every_points_trials_and_the_machine_the_same_best(runs, tmp_path):
    """Tester 3, item 5: the components every point measures alike (memory
    copy, barrier, open/close, metadata, ...) are the best of all 3 points'
    2 trials (6), not of the 1 MiB point's 2; the rows say how many; with
    2 ranks the nearest and the farthest rank are one row; the probed
    machine reads the same best."""
    con = sqlite3.connect(runs["db"])
    docs = [json.loads(t) for (t,) in con.execute("SELECT result_json FROM points WHERE run_id=1")]
    text = pario("show", "1", db=runs["db"]).stdout
    t2, t3 = "Table 2. Measured component rates", "Table 3. Overhead measurements"
    assert "best of each row's trials [worst-median]: a row at a call size is that point's, every " \
           "other row all 3 points'" in text, text
    memory = [v for d in docs for v in d["components"]["memory_copy"]["aggregate_mib_per_s"]["values"]]
    assert len(memory) == 6
    best, spread, trials = _table_row(text, t2, "memory copy, all ranks at once")
    assert float(best) == pytest.approx(max(memory), abs=0.51) and trials == "6"  # 5 digits shown
    barrier = [v for d in docs for v in d["components"]["barrier_seconds"]["values"]]
    best, spread, trials = _table_row(text, t3, "globally synchronize all ranks (barrier)")
    # in microseconds, four significant digits (tester 11: seven decimals of a second hid it)
    assert float(best) == pytest.approx(min(barrier) * 1e6, rel=1e-3) and trials == "6"
    # a stream row is its own point's two trials
    assert _table_row(text, t2, "storage, one stream write (preallocated, fsync), 4 KiB calls")[-1] == "2"
    # one pair (rank 0 and 1) measured twice: one row of both, 2 x 6 trials
    assert "nearest rank" not in text and "farthest rank" not in text
    assert _table_row(text, t2, "request/reply 4 KiB, the other rank (nearest = farthest")[-1] == "12"
    m = load_machine(_write(tmp_path, pario("model", "--machine", "probe:1", "--print-machine",
                                            db=runs["db"]).stdout))
    # the model takes the best of one point's 2 trials that all 6 expect, not the table's best of 6
    opens = [d["components"]["open_read_byte_close_seconds"]["values"] for d in docs]
    assert [len(v) for v in opens] == [2, 2, 2]
    flat = sorted(v for vals in opens for v in vals)
    # best of 2 picked from 6 (times: smaller is better): the k-th smallest is the pick's best in 6-k-1 choose 1 picks
    expected = sum(v * (5 - k) for k, v in enumerate(flat)) / 15
    best, *_ = _table_row(text, t3, "open / read a byte / close")
    assert float(best) == pytest.approx(flat[0] * 1e6, rel=1e-3)  # microseconds
    assert m["file.open_close_read"] == pytest.approx(expected, rel=1e-3, abs=5e-8)
    assert "the best of one call size's trials that all 3 call sizes' trials expect" in \
        m.sources["file.open_close_read"]
    assert m.sources["file.open_close_read"].startswith("probe run 1")


def test_a_printed_probe_machine_names_the_probe_as_its_source(runs):
    """Tester 3, item 13a: the document the values come from, the probe run."""
    data = tomllib.loads(pario("model", "--machine", "probe:1", "--print-machine", db=runs["db"]).stdout)
    assert data["name"] == "probe:1" and data["source"].startswith("pario probe run 1 (")


def test_a_probe_of_one_call_size_names_it_in_table_2(runs):
    """Run 5 probed the stream at 1 MiB calls only: its rows say so, as a
    probe of several sizes does (tester 2, 25r)."""
    table = runs[5].stdout
    for row in ("storage, one stream write (preallocated, fsync)", "storage, one stream read (cache kept out)",
                "storage, one stream read again (in the page cache)"):
        assert f"{row}, 1 MiB calls" in table, table


def test_a_printed_probe_machine_keeps_its_one_name(runs, tmp_path):
    """--print-machine of probe:1 names the machine probe:1, and a run
    predicted from the printed file says probe:1 too, with the file it came
    from (tester 2, 25s): never probe-1 beside probe:1."""
    db = _copy_db(runs, tmp_path)
    r = pario("model", "--machine", "probe:1", "--print-machine", db=db)
    assert r.returncode == 0, r.stderr
    assert tomllib.loads(r.stdout)["name"] == "probe:1"
    path = _write(tmp_path, r.stdout)
    m = pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1", "--blocks", "1m",
              "--size", "4m", "--machine", path, db=db)
    assert m.returncode == 0, m.stderr
    listed = pario("list", db=db).stdout
    assert f"predicted: model of probe:1 (from {path})" in listed and "probe-1" not in listed, listed
    assert "probe-1" not in m.stdout


def test_ideal_curves_come_only_from_a_probe_made_before_the_run(runs, tmp_path):
    """Run 5 probed the same host and file system after run 2: run 2 keeps
    run 1's ideal curves (tester 2, 25q).  Without run 1, no curves, and
    `show` and `report` say why."""
    s = pario("show", "2", db=runs["db"])
    assert s.returncode == 0, s.stderr
    assert "ideal curves from the probe of this host and file system (run 1)" in s.stdout
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM phases WHERE point_id IN (SELECT id FROM points WHERE run_id=1)")
    con.execute("DELETE FROM points WHERE run_id=1")
    con.execute("DELETE FROM runs WHERE id=1")
    con.commit()
    con.close()
    why = ("no ideal curves: the probe of this host and file system (run 5) was made after this run, "
           "so it need not describe the machine this run measured; probe before a run to draw them")
    s = pario("show", "2", db=db)
    assert s.returncode == 0, s.stderr
    assert why in s.stdout and "ideal (CFS Figure 3)" not in s.stdout, s.stdout
    html = tmp_path / "r.html"
    r = pario("report", "2", "--out", html, db=db)
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    assert "No ideal curves: the probe of this host and file system (run 5) was made after" in text
    assert "Ideal curves (dotted)" not in text


def _set_trials(con, pid, phase_seconds):
    """Give a stored point's phases the trial times of `phase_seconds`
    ({phase: seconds of each trial}), with the rates they make."""
    doc = json.loads(con.execute("SELECT result_json FROM points WHERE id=?", (pid,)).fetchone()[0])
    for ph in doc["phases"]:
        for it, seconds in zip(ph["iterations"], phase_seconds(ph)):
            it["seconds"] = seconds
            it["mib_per_s"] = it["bytes"] / 1048576 / seconds
    con.execute("UPDATE points SET result_json=? WHERE id=?", (json.dumps(doc), pid))


def test_trials_far_apart_get_one_line_under_the_table(runs, tmp_path):
    """A best-of-2 whose trials are 20x apart (run 2's read trials made
    0.1 s and 2 s, as a stalled device does) is named under its table with
    its spread (tester 2, 25o); the other points are not.  Every other
    point's trials are made steady first (0.2 s each): what the rule
    judges is the numbers given here, never how loaded the machine was
    when run 2 measured (its own trials can be 10x apart under load)."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    stalled = con.execute("SELECT id FROM points WHERE run_id=2 AND ranks=1 AND block_bytes=65536").fetchone()[0]
    for (pid,) in con.execute("SELECT id FROM points WHERE run_id=2 AND status='ok'").fetchall():
        _set_trials(con, pid, lambda ph: [0.2] * len(ph["iterations"]))
    # a 2 s stall beside a 0.1 s read
    _set_trials(con, stalled, lambda ph: (0.1, 2.0) if ph["name"] == "read" else [0.2] * len(ph["iterations"]))
    con.commit()
    con.close()
    s = pario("show", "2", db=db)
    assert s.returncode == 0, s.stderr
    lines = [l.strip() for l in s.stdout.splitlines() if l.strip().startswith("unsteady:")]
    assert len(lines) == 1, s.stdout
    assert lines[0].startswith("unsteady: trials of one point differ up to 20x (1 rank, 64 KiB: ")
    assert lines[0].endswith("[1 rank, 64 KiB]")
    # it sits under the read figure's table, not the write's
    out = s.stdout.splitlines()
    at = next(i for i, l in enumerate(out) if l.strip().startswith("unsteady:"))
    heading = next(l for l in reversed(out[:at]) if l.startswith("Figure"))
    assert "Read" in heading, heading


def test_a_probe_whose_stream_misses_its_own_line_is_named_in_the_plan_and_in_show(runs, tmp_path):
    """Tester 5, item 2: a probe whose 64 KiB write row is far off the line
    through the others (a busy machine) fits a line that misses the
    probe's own rows; the plan and the run's warnings say so."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    pid, text = con.execute("SELECT id, result_json FROM points WHERE run_id=1 AND block_bytes=65536").fetchone()
    doc = json.loads(text)
    row = doc["components"]["stream_write"]
    row["seconds"]["best"] *= 30  # every trial, as the model reads each row's trials (as_best_of)
    row["seconds"]["values"] = [v * 30 for v in row["seconds"]["values"]]
    if "mib_per_s" in row:
        row["mib_per_s"]["best"] /= 30
        row["mib_per_s"]["values"] = [v / 30 for v in row["mib_per_s"]["values"]]
    con.execute("UPDATE points SET result_json=? WHERE id=?", (json.dumps(doc), pid))
    con.commit()
    con.close()
    m = pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1", "--blocks", "1m",
              "--size", "4m", "--machine", "probe:1", db=db)
    assert m.returncode == 0, m.stderr
    said = "probe run 1's fitted 'storage, one stream write (preallocated, fsync)' misses its own "
    assert f"plan: warning: {said}" in m.stdout, m.stdout
    assert said in m.stdout.split("\nwarnings:")[1], m.stdout   # under the tables too, as stored


def test_plot_legends_sit_beside_the_data_and_y_names_the_quantity(runs):
    """Every figure of a measured run: the legend outside the axes (never on
    a point), whole inside the figure, and the y label names the quantity
    (tester 2, 25p)."""
    import matplotlib

    matplotlib.use("Agg")
    from pario.plot import draw_figure
    from pario.runner import run_views
    from pario.store import Store

    store = Store(runs["db"], readonly=True)
    *_, figures = run_views(store, 2)
    assert figures
    for data in figures:
        f = draw_figure(data)
        f.canvas.draw()
        ax = f.axes[0]
        legend = ax.get_legend()
        assert legend is not None
        box, axes, whole = legend.get_window_extent(), ax.get_window_extent(), f.bbox
        assert box.x0 >= axes.x1 or box.y1 <= axes.y0 or box.y0 >= axes.y1 or box.x1 <= axes.x0, data.heading
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 + 1 and whole.y0 <= box.y0 and box.y1 <= whole.y1 + 1
        assert ax.get_ylabel().startswith("rate (MiB/s, best of 2"), ax.get_ylabel()
    store.close()


@pytest.mark.parametrize("window", ["4k", "12k"])
def test_every_call_size_opening_one_window_is_no_growth_not_a_traceback(runs, window):
    """Tester 6, item 1: with a largest read-ahead window of 12 KiB or less
    every call size opens the same first window (as 64 KiB and 1 MiB calls
    do under the common read_ahead_kb of 128): no line to fit, so no growth
    and the median start, as for one call size; the model runs and stores."""
    from pario.model.probed import machine_from_probe
    from pario.store import Store

    store = Store(runs["db"], create=False)
    try:
        m = machine_from_probe(store, 1, [f"disk.read_ahead={window}"])
    finally:
        store.close()
    assert m["disk.read_start_rate"] == 0 and m["disk.read_start_limit"] == 0
    assert "every call size at one x" in m.sources["disk.read_start_rate"]
    assert "their median" in m.sources["disk.read_latency"]
    r = pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "2", "--blocks", "1m",
              "--size", "4m", "--machine", "probe:1", "--set", f"disk.read_ahead={window}",
              "--print-machine", db=runs["db"])
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_one_x_fit_is_the_median_start():
    from pario.model import read_start

    assert read_start.fit([(4096, 3e-3), (4096, 1e-3), (4096, 2e-3)])[:2] == (2e-3, 0.0)
    assert read_start.fit([(4096, 3e-3), (4096, 1e-3)])[:2] == (2e-3, 0.0)


def test_a_pass_the_device_did_not_serve_alone_is_left_out_of_the_notes(runs, tmp_path):
    """Tester 6, item 2: the device's counters are the whole device's.  A
    trial whose device bytes are not its file's (another process read the
    disk: 100 MiB for a 64 MiB file) is flagged by the engine and left out
    of the request sizes under Table 2 and in the rates' sources, and both
    say so; a probe made before the engine's verdict is judged alike."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, result_json FROM points WHERE run_id=1").fetchall()
    if not json.loads(rows[0][1])["components"]["two_same"].get("device_reads"):
        pytest.skip("the probe's directory has no block device to count")
    for pid, text in rows:
        doc = json.loads(text)
        c = doc["components"]
        for key in ("two_same", "stream_read"):
            dev = c[key]["device_reads"]
            size = dev["file_bytes"]
            # every trial the pass's own but the first, which the disk shared
            dev["bytes"] = [int(size * 1.5)] + [size] * (len(dev["bytes"]) - 1)
            dev["own"] = [False] + [True] * (len(dev["bytes"]) - 1)
            dev["requests"] = [400] + [32] * (len(dev["bytes"]) - 1)
        if doc["params"]["block_bytes"] == 65536:  # as a probe before the verdict
            del c["two_same"]["device_reads"]["own"]
        con.execute("UPDATE points SET result_json=? WHERE id=?", (json.dumps(doc), pid))
    con.commit()
    con.close()
    shown = pario("show", "1", db=db)
    assert shown.returncode == 0, shown.stderr
    assert "the device did other reads during these passes at 4 KiB calls" in shown.stdout
    assert "two readers of the same bytes: 1 of 2 trial(s) read" in shown.stdout
    one_own = f"{size // 32 // 1024} KiB"  # the own trials' requests, not the shared one's
    assert f"one stream {one_own}" in shown.stdout and "two readers of the same bytes " + one_own in shown.stdout
    r = pario("model", "--machine", "probe:1", "--print-machine", db=db)
    assert r.returncode == 0, r.stderr
    src = tomllib.loads(r.stdout)["disk"]["same_read_rate"]["source"]
    assert "left out, the device did other reads during the pass" in src
    assert "64 KiB calls 1 of 2 trial(s) read" in src  # judged without the engine's verdict too
    assert f"4 KiB calls {size // 32 // 1024} KiB (one stream {size // 32 // 1024})" in src


def test_a_predicted_point_carries_the_measured_ones_params_and_columns(runs, tmp_path):
    """Tester 6, item c: a read-only broadcast syncs nothing, measured or
    predicted (fsync False in both exports, so the two join on their
    parameters), and a time is one column `seconds` in both, not
    `seconds_s`."""
    import csv
    import io

    db = _copy_db(runs, tmp_path)
    plan = ["--quick", "--tests", "broadcast", "--ranks", "1", "--blocks", "1m", "--size", "4m"]
    assert pario("run", "cfs", "--dir", runs["dir"], *plan, db=db).returncode == 0
    assert pario("model", "cfs", *plan, "--machine", "probe:1", db=db).returncode == 0
    ran, predicted = sqlite3.connect(db).execute("SELECT max(id) - 1, max(id) FROM runs").fetchone()
    exports = []
    for run_id in (ran, predicted):
        e = pario("export", str(run_id), "--csv", db=db)
        assert e.returncode == 0, e.stderr
        exports.append(list(csv.DictReader(io.StringIO(e.stdout))))
    values = {"run", "point", "source", "fs_type", "memory_backed", "caches", "measured", "predicted", "iteration",
              "rate_MiB_per_s", "seconds", "cache_fraction", "per_target_rate_MiB_per_s", "load"}
    for rows in exports:
        assert "seconds" in rows[0] and "seconds_s" not in rows[0]
        assert {r["fsync"] for r in rows} == {"False"}
    measured, model = ({k: v for k, v in rows[0].items() if k not in values} for rows in exports)
    assert measured == model
    assert all(float(r["seconds"]) > 0 for rows in exports for r in rows)
    assert list(d for d in runs["dir"].iterdir()) == []


def test_every_probe_table_in_the_report_has_a_number(runs, tmp_path):
    """Tester 6, item d: Tables 2 and 3 keep the CFS report's numbers; the
    metadata rates, a table of pario's own, take pario's (Table P2), with
    the probe's numbers in it."""
    out = tmp_path / "probe.html"
    r = pario("report", "1", "--out", out, db=runs["db"])
    assert r.returncode == 0, r.stderr
    captions = re.findall(r"<caption>([^<]*)</caption>", out.read_text())
    assert all(re.match(r"Table (P?\d+)\. ", c) for c in captions), captions
    meta = [c for c in captions if "Metadata rates" in c]
    assert meta and all(c.startswith("Table P") for c in meta), captions
    body = out.read_text().split(meta[0])[1].split("</table>")[0]
    assert re.search(r"creates \(all ranks at once\)</td><td>\d", body), body[:300]


def test_a_device_with_read_ahead_off_is_not_called_no_device(runs, tmp_path):
    """Tester 6, item j: read_ahead_kb 0 (as database hosts set it; the
    engine records max_bytes 0) is read-ahead off, not a file system
    without a block device, in Table 2's note and the machine's source."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, result_json FROM points WHERE run_id=1").fetchall()
    for pid, text in rows:
        doc = json.loads(text)
        doc["components"]["read_ahead"] = {"max_bytes": 0, "source": "/sys/dev/block/7:0/queue/read_ahead_kb"}
        con.execute("UPDATE points SET result_json=? WHERE id=?", (json.dumps(doc), pid))
    con.commit()
    con.close()
    shown = pario("show", "1", db=db)
    assert shown.returncode == 0 and "the device's read-ahead is off (read_ahead_kb 0)" in shown.stdout
    r = pario("model", "--machine", "probe:1", "--print-machine", db=db)
    assert r.returncode == 0, r.stderr
    src = tomllib.loads(r.stdout)["disk"]["read_ahead"]["source"]
    assert "read-ahead off, read_ahead_kb 0" in src and "no block device" not in src


def test_expected_best_is_the_order_statistic_of_a_pick():
    """The best of k trials picked from 1..n expects k(n+1)/(k+1) (the largest)
    and (n+1)/(k+1) (the smallest); k at or above n is the plain best; no
    trials, None."""
    from pario.studies.probe import expected_best
    nine = [5, 1, 9, 3, 7, 2, 8, 4, 6]
    assert expected_best(nine, 3) == pytest.approx(3 * 10 / 4)
    assert expected_best(nine, 3, "min") == pytest.approx(10 / 4)
    assert expected_best(nine, 1) == pytest.approx(5.0)  # one trial: their mean
    assert expected_best(nine, 9) == 9 and expected_best(nine, 12, "min") == 1
    assert expected_best([], 3) is None


def test_a_probe_row_stands_for_the_best_of_the_measured_runs_trials():
    """A measured figure is the best of its run's trials: each probe row is
    taken as the best of that many that its own trials expect, a time the
    smaller way, a rate the larger; a row's trials are kept as measured."""
    from pario.model.probed import as_best_of
    doc = {"components": {"s": {"seconds": {"values": [3.0, 1.0, 2.0], "best": 1.0},
                                "mib_per_s": {"values": [10.0, 30.0, 20.0], "best": 30.0}},
                          "rows": [{"values": [5.0, 7.0], "best": 7.0}], "other": 4}}
    two = as_best_of(doc, 2)
    assert two["components"]["s"]["seconds"]["best"] == pytest.approx((1 * 2 + 2 * 1) / 3)
    assert two["components"]["s"]["mib_per_s"]["best"] == pytest.approx((30 * 2 + 20 * 1) / 3)
    assert two["components"]["s"]["seconds"]["values"] == [3.0, 1.0, 2.0]
    assert two["components"]["rows"][0]["best"] == 7.0 and two["components"]["other"] == 4
    assert as_best_of(doc, 1)["components"]["rows"][0]["best"] == pytest.approx(6.0)
    assert doc["components"]["s"]["seconds"]["best"] == 1.0  # the stored document is not changed


def test_a_prediction_follows_the_measured_runs_trials(runs, tmp_path):
    """pario model with the measured run's --iterations: one trial is the
    mean of the probe's trials, two their expected best of two; the
    parameters' sources say which.  (Each row is no faster at one trial
    than at two: the as_best_of test above.  A whole prediction need not
    be: a line fitted through three call sizes' means can cross zero bytes
    lower than the one through their bests, so a noisy 4 MiB probe
    predicted 777 MiB/s from means against 762 from bests once in ten.)"""
    db = _copy_db(runs, tmp_path)
    sources = {}
    for n in (1, 2):
        r = pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1", "--blocks", "1m",
                  "--size", "4m", "--machine", "probe:1", "--iterations", str(n), db=db)
        assert r.returncode == 0, r.stderr
        assert float(re.search(r"\n\s+1\s+([0-9.]+)", r.stdout.split("Figure")[1]).group(1)) > 0
        con = sqlite3.connect(db)
        sources[n] = json.dumps([json.loads(t)["model"]["machine"] for (t,) in con.execute(
            "SELECT result_json FROM points WHERE run_id=(SELECT max(id) FROM runs)")])
        con.close()
    assert "the mean of its trials (a measured figure of one trial)" in sources[1]
    assert "the best of 2 trials that its pooled trials expect" in sources[2]
    assert "pooled trials expect" not in sources[1] and "the mean of its trials" not in sources[2]


def test_a_printed_probe_machine_predicts_as_probe_run_does_at_its_trials(runs, tmp_path):
    """Tester 7, item 5: --print-machine ignored the experiment and its
    --iterations, so the file it wrote (every row the best of its own
    trials) predicted another figure than probe:RUN at one trial.  Now the
    printed machine is fitted for the plan's trials, its first line says
    for how many, and the file predicts what probe:1 predicts."""
    db = _copy_db(runs, tmp_path)
    plan = ["cfs", "--quick", "--tests", "partitioned", "--ranks", "1", "--blocks", "1m", "--size", "4m",
            "--iterations", "1"]
    printed = pario("model", *plan, "--machine", "probe:1", "--print-machine", db=db)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.splitlines()[0].endswith(
        "measured it, every row as the best of 1 trial (for points of 1: --iterations 1)")
    saved = tmp_path / "host.toml"
    saved.write_text(printed.stdout)
    figures = []
    for machine in ("probe:1", saved):
        r = pario("model", *plan, "--machine", machine, db=db)
        assert r.returncode == 0, r.stderr
        figures.append(re.findall(r"\n\s+1\s+([0-9.]+)", r.stdout))
    assert figures[0] == figures[1] and len(figures[0]) == 2, figures  # write and read, alike
    # without an experiment, --iterations says the trials
    alone = pario("model", "--machine", "probe:1", "--iterations", "1", "--print-machine", db=db)
    assert alone.stdout == printed.stdout


def test_compare_says_when_the_prediction_took_the_best_of_other_trials(runs, tmp_path):
    """Tester 7, item 10: run 2 is the best of 2 trials a point, run 3 a
    prediction for the preset's 3 (the probe's rows as the best of 3:
    probed.as_best_of): compare held them against each other without a
    word.  A prediction at the run's --iterations gets no such line; it
    said 'the best of 1' of every prediction, and told a prediction that
    stood for the measured run's trials to predict them (tester 17, item 4)."""
    db = _copy_db(runs, tmp_path)
    r = pario("compare", "2", "3", db=db)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert ("warning: run 2 took the best of 2 trials a point, run 3 predicted the best of 3: predict "
            "with --iterations 2 for figures alike") in text, r.stdout
    m = pario("model", "cfs", *PLAN, "--machine", "probe:1", "--iterations", "2", db=db)
    assert m.returncode == 0, m.stderr
    latest = sqlite3.connect(db).execute("SELECT max(id) FROM runs").fetchone()[0]
    r = pario("compare", "2", str(latest), db=db)
    assert r.returncode == 0 and "trials a point" not in r.stdout, r.stdout
    # a printed machine keeps the trials its rows stand for, and so does its prediction
    printed = pario("model", "cfs", *PLAN, "--machine", "probe:1", "--iterations", "2", "--print-machine", db=db)
    assert "\nbest_of = 2\n" in printed.stdout, printed.stdout
    kept = tmp_path / "kept.toml"
    kept.write_text(printed.stdout)
    m = pario("model", "cfs", *PLAN, "--machine", kept, db=db)
    assert m.returncode == 0, m.stderr
    r = pario("compare", "2", str(latest + 1), db=db)
    assert r.returncode == 0 and "trials a point" not in r.stdout, r.stdout


def test_rows_of_different_sizes_are_fitted_in_calls_and_bytes():
    """Tester 10, item 3: a probe whose file is not four whole calls at its
    largest call size (--size 10m in 1 MiB calls) gives the four readers 8
    MiB there and 10 at the smaller calls; the fit takes each row's own
    calls and bytes and recovers the line: 2 us a call, 0.5 ns a byte
    (after 1 ms of open/close), and the rows' text names the short row's
    bytes.  One call size alone is still refused."""
    from pario.model.probed import ProbeRefusal, _stream_fit

    def row(block, size):
        seconds = 0.001 + size // block * 2e-6 + size * 0.5e-9
        return {"components": {"four_streams": {"block_bytes": block, "bytes": size,
                                                "seconds": {"best": seconds, "values": [seconds]}}}}

    docs = [row(4096, 10 << 20), row(65536, 10 << 20), row(1 << 20, 8 << 20)]
    per_call, per_byte, rows, size = _stream_fit(7, docs, "four_streams", 0.001)
    assert per_call == pytest.approx(2e-6) and per_byte == pytest.approx(0.5e-9)
    assert size == 10 << 20 and "1 MiB calls" in rows and "for 8 MiB)" in rows
    assert "4 KiB calls" in rows and rows.count(" for ") == 1
    with pytest.raises(ProbeRefusal, match="at 1 call size"):
        _stream_fit(7, docs[:1], "four_streams", 0.001)


def test_print_machine_reads_a_probe_on_a_read_only_mount(runs, small_tmpfs):
    """Tester 21, item 4: --print-machine stores nothing, yet a probe's
    database on a read-only share was refused as a place pario 'cannot
    store'; a predicted run from it still is."""
    import subprocess

    mounted = small_tmpfs("64m")
    db = mounted / "r.sqlite"
    db.write_bytes(runs["db"].read_bytes())
    subprocess.run(["mount", "-o", "remount,ro", str(mounted)], check=True)
    printed = pario("model", "--machine", "probe:1", "--print-machine", db=db)
    assert printed.returncode == 0 and printed.stdout == \
        pario("model", "--machine", "probe:1", "--print-machine", db=runs["db"]).stdout, printed.stderr
    stored = pario("model", "cfs", *PLAN, "--machine", "probe:1", db=db)
    assert stored.returncode == 2 and "is on a read-only file system: pario cannot store there" in stored.stderr


def test_a_probe_stored_before_runs_kept_their_kind_still_makes_a_machine(runs, tmp_path):
    """Tester 22, item 5: in a database of an older pario (runs.kind NULL,
    as the migration leaves it) 'run 1 is a probe run (kind io), not a
    probe'; show found such probes by their preset already."""
    db = _copy_db(runs, tmp_path)
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET kind = NULL")
    con.commit()
    con.close()
    r = pario("model", "--machine", "probe:1", "--print-machine", db=db)
    assert r.returncode == 0 and r.stdout == \
        pario("model", "--machine", "probe:1", "--print-machine", db=runs["db"]).stdout, r.stderr
    r = pario("model", "--machine", "probe:2", "--print-machine", db=db)
    assert r.returncode == 2 and "run 2 is a run of cfs (kind io), not a probe" in r.stderr, r.stderr


def test_a_run_whose_figures_take_no_ideal_curve_names_no_probe_for_them(runs, tmp_path):
    """Tester 23, item 10: nht1 and the suite said 'ideal curves from the
    probe of this host (run N)' above figures that draw none."""
    db = _copy_db(runs, tmp_path)
    r = pario("run", "nht1", "--quick", "--ranks", "1", "--classes", "S", "--dir", runs["dir"],
              "--out", tmp_path / "p", db=db)
    assert r.returncode == 0, r.stderr
    assert "ideal curves" not in r.stdout and "no ideal curves" not in r.stdout, r.stdout
    assert "ideal curves from the probe of this host and file system (run 1)" in pario("show", "2", db=db).stdout
