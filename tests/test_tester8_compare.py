"""Tester report 8, items 4, 13 and 17 (compare): --fail-below with two
predictions is one line (it was an AttributeError traceback), NaN is
refused like inf (a gate that can never fail), a run compared with itself
says so plainly (tests use it to see a run's rows), and an incomplete run is named as one."""

import signal

import pytest

from conftest import ROOT  # noqa: F401  (sys.path for pario)
from test_front_end import pario, pario_background

MODEL = ["model", "cfs", "--quick", "--tests", "partitioned"]


@pytest.fixture(scope="module")
def predictions(tmp_path_factory):
    db = tmp_path_factory.mktemp("compare") / "m.sqlite"
    for machine in ("ipsc860", "asci-red"):
        r = pario(*MODEL, "--machine", machine, db=db)
        assert r.returncode == 0, r.stderr
    return db


def _one_error(r):
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_fail_below_with_two_predictions_is_one_line(predictions):
    r = pario("compare", "1", "2", "--fail-below", "0.9", db=predictions)
    assert _one_error(r) == ("pario: error: --fail-below compares two measured runs, and runs 1 and 2 are "
                             "both predictions (a model has no noise to judge a regression by): drop it")
    assert r.stdout == ""  # refused before any table


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan"])
def test_fail_below_nan_is_refused(predictions, value):
    r = pario("compare", "1", "2", f"--fail-below={value}", db=predictions)
    assert f"'{value}' is not a ratio such as 0.9" in _one_error(r)


def test_a_run_compared_with_itself_says_so(predictions):
    r = pario("compare", "2", "2", db=predictions)
    assert r.returncode == 0, r.stderr
    assert ("note: run 2 is compared with itself: every point matches its own trials, so no verdict below "
            "can show a change (give two different runs for that)") in " ".join(r.stdout.split())
    assert "compared with itself" not in pario("compare", "1", "2", db=predictions).stdout


def test_an_incomplete_run_is_named_as_one(tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    args = ["run", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1", "--size", "4m",
            "--dir", str(shm_dir)]
    assert pario(*args, db=db).returncode == 0
    p = pario_background(*args, "--iterations", "3", db=db)
    for line in p.stderr:  # stopped after its first point is stored
        if line.startswith("[2/"):
            p.send_signal(signal.SIGINT)
            break
    p.communicate(timeout=120)
    assert p.returncode == 130
    r = pario("compare", "1", "2", db=db)
    assert r.returncode == 0, r.stderr
    assert ("warning: run 2 is incomplete (it did not finish its plan): only the points it stored are "
            "compared") in " ".join(r.stdout.split())
    assert "run 1 is" not in r.stdout
    # measured against predicted says it too
    assert pario(*MODEL, "--ranks", "1", "--size", "4m", "--machine", "ipsc860", db=db).returncode == 0
    r = pario("compare", "2", "3", db=db)
    assert r.returncode == 0 and "warning: run 2 is incomplete" in r.stdout, r.stderr
