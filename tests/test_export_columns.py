"""`pario export`'s columns are the same for every run of a kind, whatever
became of its points (tester 11, item 6: a failed point's row carried the
plan's `phases` and `iterations`, a run whose points all failed lacked
the facts a result gives), so a script can join the exports of several
runs.  Driven through the real command line and engine on small sizes."""

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

CFS = ["cfs", "--tests", "partitioned", "--blocks", "64k", "--size", "1m", "--iterations", "2"]
BONNIE = ["bonnie", "--quick", "--tests", "bonnie"]
PROBE = ["probe", "--quick", "--size", "4m", "--iterations", "1", "--stream-blocks", "64k,1m"]


def pario(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def launcher(tmp_path, refuse):
    """A launch template that refuses the rank counts in `refuse` ('*': all)."""
    script = tmp_path / f"launch-{refuse.replace('*', 'all')}.sh"
    test = "true" if refuse == "*" else f"[ \"$1\" = {refuse} ]"
    script.write_text("#!/bin/sh\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                      f"{test} && {{ echo 'launch refused on purpose' >&2; exit 1; }}\n"
                      "exec mpirun --oversubscribe -np \"$@\"\n")
    script.chmod(0o755)
    return ["--launcher-template", f"{script} {{ranks}} {{engine}} {{engine_args}}"]


def exported(db):
    text = pario("export", "1", "--csv", db=db)
    assert text.returncode == 0, text.stderr
    as_json = pario("export", "1", "--json", db=db)
    assert as_json.returncode == 0, as_json.stderr
    rows = list(csv.DictReader(io.StringIO(text.stdout)))
    return text.stdout.splitlines()[0].split(","), rows, json.loads(as_json.stdout)


@pytest.mark.parametrize("study, ranks", [(CFS, ["--ranks", "1,2"]), (BONNIE, []), (PROBE, ["--ranks", "1,2"])])
def test_all_ran_some_failed_and_all_failed_export_the_same_columns(study, ranks, shm_dir, tmp_path):
    outcomes = {"ran": [], "failed": launcher(tmp_path, "*")}
    if ranks:
        outcomes["mixed"] = launcher(tmp_path, "2")
    heads = {}
    for name, launch in outcomes.items():
        db = tmp_path / f"{name}.sqlite"
        out = [] if study is PROBE else ["--out", tmp_path / name]  # a probe draws no figure
        r = pario("run", study[0], "--dir", shm_dir, *study[1:], *ranks, *launch, *out, db=db)
        assert r.returncode == (0 if name == "ran" else 3), r.stderr
        heads[name], rows, as_json = exported(db)
        # every JSON row has every column, null where the CSV is empty
        assert all(list(x) == heads[name] for x in as_json)
        failed = [x for x in rows if x["status"] == "failed"]
        assert all(x["error"] == "launch refused on purpose" and x["iteration"] == "" for x in failed)
        assert all(not any(v for k, v in x.items() if k.startswith(("rate", "seconds"))) for x in failed)
    assert heads["failed"] == heads["ran"], set(heads["failed"]) ^ set(heads["ran"])
    assert heads.get("mixed", heads["ran"]) == heads["ran"]
    # the plan's own names are no column; what a result gives is one, even when none ran
    assert not {"phases", "iterations"} & set(heads["ran"])
    assert "memory_backed" in heads["ran"] or "device_request_bytes" in heads["ran"]


# what the plan decides and the engine's result repeats: a failed point's
# row says it as the result would have (IoKind.planned_params)
PLANNED_AS_RESULT = ("group_unit", "prealloc", "fsync", "evict", "direct", "stripe_targets",
                     "stripe_unit_bytes", "background", "background_kind", "aggregators", "group")


@pytest.mark.parametrize("flags", [[], ["--no-fsync", "--cached", "--direct"], ["--prealloc"]])
def test_a_failed_io_point_is_a_row_per_phase_it_planned(flags, shm_dir, tmp_path):
    db = tmp_path / "mixed.sqlite"
    r = pario("run", *CFS, *flags, "--ranks", "1,2", "--dir", shm_dir, *launcher(tmp_path, "2"),
              "--out", tmp_path / "p", db=db)
    assert r.returncode == 3, r.stderr
    _, rows, as_json = exported(db)
    failed = [x for x in rows if x["status"] == "failed"]
    assert [(x["ranks"], x["phase"]) for x in failed] == [("2", "write"), ("2", "read")]
    assert all(x["block_bytes"] == "65536" and x["size_bytes"] == "1048576" for x in failed)
    ran = [x for x in rows if x["status"] == "ok"]
    assert sorted({(x["phase"], x["iteration"]) for x in ran}) == [("read", "0"), ("read", "1"),
                                                                   ("write", "0"), ("write", "1")]
    assert all(float(x["rate_MiB_per_s"]) > 0 and x["quantity"] == x["phase"] for x in ran)
    assert [x["rate_MiB_per_s"] for x in as_json if x["status"] == "failed"] == [None, None]
    for x in failed:
        like = next(y for y in ran if y["phase"] == x["phase"])
        assert {k: x[k] for k in PLANNED_AS_RESULT} == {k: like[k] for k in PLANNED_AS_RESULT}, flags
    assert {x["fsync"] for x in ran} == {str("--no-fsync" not in flags)}


def test_every_kind_declares_the_columns_of_its_export():
    """A kind's parameters and facts name their columns once each, and a
    study of the suite names each as the suite does (beff's chunk was
    `chunk`, bonnie's `chunk_bytes`: one suite run had both)."""
    from pario.runs import export_columns
    from pario.studies import kinds

    for name, kind in kinds().items():
        columns = export_columns(kind, [])
        assert len(columns) == len(set(columns)), name
        assert columns[:5] == ["run", "point", "source", "status", "error"]
    suite = kinds()["suite"]
    for study in ("bonnie", "perf", "laplace", "flashio", "beff", "btio"):
        assert set(export_columns(kinds()[study], [])) <= set(export_columns(suite, []))
