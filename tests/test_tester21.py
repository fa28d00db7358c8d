"""Tester 21's findings on workflows across stored runs, through the real
command line: a report of a run whose every point failed beside a
prediction of it."""

import shutil
import uuid
from pathlib import Path

import pytest

from test_front_end import pario

SMALL = ("--quick", "--tests", "partitioned", "--ranks", "1", "--blocks", "1m", "--size", "8m")


@pytest.fixture(scope="module")
def failed_and_predicted(tmp_path_factory):
    """Run 1: cfs with every point failed (a launcher that runs no engine);
    run 2: the same plan predicted on ipsc860."""
    tmp = tmp_path_factory.mktemp("tester21")
    db = tmp / "r.sqlite"
    d = Path("/dev/shm") / f"pario-test-{uuid.uuid4().hex[:10]}"
    d.mkdir()
    try:
        r = pario("run", "cfs", *SMALL, "--dir", d, "--launcher-template", "echo {ranks} {engine} {engine_args}",
                  db=db)
        assert r.returncode == 3, (r.stdout, r.stderr)
        r = pario("model", "cfs", *SMALL, "--machine", "ipsc860", db=db)
        assert r.returncode == 0, (r.stdout, r.stderr)
        yield {"db": db, "tmp": tmp}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_report_of_a_failed_run_beside_its_prediction_is_written(failed_and_predicted):
    """Item 1: it was refused whole, in compare's words ('no successful,
    verified point to compare')."""
    out = failed_and_predicted["tmp"] / "r.html"
    r = pario("report", "1", "2", "--out", out, db=failed_and_predicted["db"])
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "Run 1 has no successful point, so there is no measured-against-predicted table" in page
    assert "Measured run 1 against PREDICTED run 2" in page
