"""model/scope.py: every plan-point parameter the model would ignore is
named, so `pario model` leaves the point out instead of predicting it
wrong (no engine, no database: the rules alone)."""

from dataclasses import dataclass

from pario.model import load_machine
from pario.model.scope import refusals, unmodelled
from pario.studies.io import IoPoint


def _point(test="t", **kw):
    base = dict(test_id=test, title=test, layout="partitioned", phases=["write", "read"], ranks=1,
                block=1 << 20, size=16 << 20, iterations=1, extra=["--evict"])
    return IoPoint(**{**base, **kw})


def _probed():
    m = load_machine("ipsc860", [])
    m.host_page_cache = True  # as machine_from_probe builds it
    return m


def test_what_the_model_honours_passes():
    for machine in (_probed(), load_machine("ipsc860", [])):
        assert unmodelled(_point(), machine) == {}
        assert unmodelled(_point(extra=["--evict", "--prealloc", "--group-unit", "rank"], group=2),
                          machine) == {}
        assert unmodelled(_point(api="mpiio", options=["--collective", "--mpiio-impl", "romio"],
                                 aggregators=1), machine) == {}


def test_each_ignored_parameter_is_named():
    m = _probed()
    assert set(unmodelled(_point(stripe_targets=2, stripe_unit=1 << 20), m)) == {"stripe_targets"}
    assert set(unmodelled(_point(background=2, background_kind="cpu"), m)) == {"background"}
    assert set(unmodelled(_point(api="stdio", options=["--stdio-buffer", "8k"]), m)) == {"--stdio-buffer"}
    # the cached regimes of a probed host: its page cache is not in the model
    assert set(unmodelled(_point(extra=["--no-fsync"]), m)) == {"--no-fsync", "evict"}
    assert set(unmodelled(_point(phases=["write"], extra=[]), m)) == set()
    # a described machine has no host page cache: fsync or not is its own cache's business
    assert unmodelled(_point(extra=["--no-fsync", "--evict"]), load_machine("ipsc860", [])) == {}
    # atomic mode only as a munix machine's token or a byte-range lock per call
    assert set(unmodelled(_point(api="mpiio", options=["--atomic"]), m)) == {"--atomic"}
    locking = load_machine("ipsc860", ["file.lock_overhead=2us"])
    assert unmodelled(_point(api="mpiio", options=["--atomic"]), locking) == {}


def test_a_parameter_nobody_taught_the_model_is_refused():
    @dataclass
    class Grown(IoPoint):
        new_knob: int = 3

        def params(self):
            return {**super().params(), "new_knob": self.new_knob}

    got = unmodelled(Grown("t", "t", "partitioned", ["write"], 1, 1 << 20, 16 << 20), _probed())
    assert got == {"new_knob": ("3", "the model does not know parameter new_knob")}


def test_one_line_per_test_with_its_parameters_and_the_fix():
    pts = [_point(), _point("loaded", background=0), _point("loaded", background=2),
           _point("loaded", background=4), _point("striped", stripe_targets=2)]
    kept, lines = refusals(pts, _probed())
    # tester 5, item 6: the loaded test's unloaded point alone is no
    # prediction of what the test varies (its figure divides it by itself)
    assert [(p.test_id, p.background) for p in kept] == [("t", 0)]
    assert lines == [
        "leaving out 3 point(s) of test loaded, which the model does not predict: background=2,4: "
        "the model has no background loaders, which is all test loaded varies (the background=0 "
        "point left alone would be compared with nothing); give --tests without loaded to leave "
        "it out, or measure it with 'pario run'",
        "leaving out 1 point(s) of test striped, which the model does not predict: stripe_targets=2: "
        "the model has no striping over several targets (each its own file system); give --tests "
        "without striped to leave it out, or measure it with 'pario run'"]


def test_measurement_diagnoses_do_not_apply_to_predictions():
    """A predicted phase of a few ms is no timer artefact: no short-phase
    finding (the same document, unmarked, gets one)."""
    from pario.analysis.diagnose import diagnose
    from pario.analysis.measured import MeasuredPoint
    from pario.model import predict_point

    doc = predict_point(_point(phases=["write"], size=16 << 10, block=8 << 10, extra=[]),
                        load_machine("ipsc860", ["file.open_close_write=0s", "disk.write_rate=1000MB/s",
                                                 "disk.write_overhead=0s", "network.latency=0s"]))
    assert doc["phases"][0]["iterations"][0]["seconds"] < 0.05

    def rules(d):
        rate = d["phases"][0]["summary"]["best_mib_per_s"]
        return {f.rule for f in diagnose([MeasuredPoint("write", 1, "1 MiB", [rate], doc=d)])}

    assert "short-phase" not in rules(doc)
    assert "short-phase" in rules({**doc, "predicted": False})
