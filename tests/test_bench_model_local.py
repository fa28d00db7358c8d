"""bench/model_local.py's count of the same point measured twice in one
run: which two points are one measurement (the engine's command but for
the names of its files; a --group that cannot act at that rank count), and
the line it prints from their best trials."""

import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import model_local  # noqa: E402


def point(best, ranks, *argv, phase="read", name="p0"):
    return SimpleNamespace(best=best, ranks=ranks, phase=phase,
                           doc={"argv": ["io", *argv, "--name", name, "--json", f"/tmp/{name}.json",
                                         "--dir", f"/var/tmp/{name}"]})


BASE = ("--layout", "interleaved", "--block", "4k", "--size", "32m")


def test_points_alike_but_for_their_file_names_are_one_measurement():
    a, b = point(100, 2, *BASE, name="a"), point(150, 2, *BASE, name="b")
    assert model_local.engine_measure(a) == model_local.engine_measure(b)
    assert model_local.engine_measure(a) != model_local.engine_measure(point(100, 4, *BASE))
    assert model_local.engine_measure(a) != model_local.engine_measure(point(100, 2, *BASE, phase="write"))
    assert model_local.engine_measure(a) != model_local.engine_measure(point(100, 2, *BASE[:-1], "64m"))


def test_a_group_that_cannot_act_is_the_ungrouped_point_and_one_that_can_is_not():
    plain = model_local.engine_measure(point(1, 2, *BASE))
    assert model_local.engine_measure(point(1, 2, *BASE, "--group", "2")) == plain
    assert model_local.engine_measure(point(1, 1, *BASE, "--group", "2")) == \
        model_local.engine_measure(point(1, 1, *BASE))
    assert model_local.engine_measure(point(1, 4, *BASE, "--group", "2")) != \
        model_local.engine_measure(point(1, 4, *BASE))


def test_the_line_counts_pairs_apart_and_pairs_no_figure_can_serve(monkeypatch):
    runs = {11: [point(100, 2, *BASE), point(120, 2, *BASE, "--group", "2"),   # 1.2x
                 point(100, 1, *BASE), point(160, 1, *BASE, "--group", "4"),   # 1.6x
                 point(100, 4, *BASE), point(300, 4, *BASE, "--group", "2")]}  # not a pair
    monkeypatch.setattr(model_local, "measured_points", lambda store, run: (None, None, runs[run]))
    line = model_local.same_point_twice(None, ["cfs"], [{"cfs": [10, 11]}])
    assert line.endswith("2 pairs over the rounds, 1 (50%) more than 25% apart, 1 more than 1.56x apart "
                         "(no one figure within 25% of both); the widest 1.60x, the median 1.40x"), line
    runs[11] = runs[11][4:]
    assert model_local.same_point_twice(None, ["cfs"], [{"cfs": [10, 11]}]).endswith("no such pair in these presets")
