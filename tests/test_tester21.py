"""Tester 21's findings on workflows across stored runs, through the real
command line: a report of a run whose every point failed beside a
prediction of it."""

import os
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
    assert pario("report", "1", "2", "--out", out, db=failed_and_predicted["db"]).returncode == 0
    said = ("Measured run 1 against PREDICTED run 2",
            "Run 1 has no successful point, so there is no measured-against-predicted table")
    assert [s for s in said if s not in out.read_text()] == []


def test_a_run_stopped_before_its_first_point_exports_the_header_alone(tmp_path):
    """Item 8: 'run N has no successful point to export' (exit 2) stopped a
    script exporting every run, where a run whose points all failed
    exports its rows; now the columns alone (JSON: []) and the note."""
    import os
    import signal
    import sys

    from conftest import ROOT, interrupt_when

    db, mark = tmp_path / "r.sqlite", tmp_path / "launched"
    argv = [sys.executable, "-m", "pario", "run", "cfs", *SMALL, "--dir", tmp_path, "--db", db,
            "--launcher-template", f"sh -c 'touch {mark}; exec sleep 60' {{ranks}} {{engine}} {{engine_args}}"]
    proc = {}

    def started():
        import subprocess
        out = subprocess.run(["pgrep", "-f", f"pario run cfs .*{db}"], capture_output=True, text=True).stdout
        proc["pids"] = [int(p) for p in out.split()]
        return mark.exists() and proc["pids"]

    code, _, _ = interrupt_when([str(a) for a in argv], {**os.environ, "PYTHONPATH": str(ROOT / "src")},
                                started, lambda: [os.kill(p, signal.SIGINT) for p in proc["pids"]])
    assert code == 130
    csv_out = pario("export", "1", "--csv", db=db)
    assert csv_out.returncode == 0, csv_out.stderr
    assert csv_out.stdout.startswith("run,point,source,status,error,") and csv_out.stdout.count("\n") == 1
    assert csv_out.stderr == "pario: note: run 1 is incomplete (1 not run): its export holds no row: it stored no point\n"
    json_out = pario("export", "1", "--json", db=db)
    assert json_out.returncode == 0 and json_out.stdout == "[]\n", json_out.stderr


@pytest.mark.parametrize("edit,what", [
    ("UPDATE points SET result_json = '{}'", "its 'params' is missing"),
    ("UPDATE points SET result_json = '{\"params\": 3}'", "a value is malformed"),
])
def test_a_point_its_kind_cannot_read_is_one_line_not_a_traceback(shm_dir, tmp_path, edit, what):
    """Item 3's second half: a schema-1 database's suite point (no
    params_json, so no 'study') ended show and report in a KeyError."""
    import sqlite3

    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned", "--ranks", "1", "--blocks", "64k",
              "--size", "1m", "--iterations", "1", "--out", tmp_path / "plots", db=db)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(db)
    con.execute(edit)
    con.commit()
    con.close()
    for args in (["show", "1"], ["report", "1", "--out", tmp_path / "r.html"]):
        got = pario(*args, db=db)
        assert got.returncode == 2 and got.stderr == (
            f"pario: error: run 1's point partitioned cannot be read as a point of kind io ({what}): it was stored by "
            "an older pario, or the database was changed; 'pario list' and 'pario show' of other runs "
            "still work\n"), got.stderr
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("version,said", [
    (7, "was written by a newer pario (schema 7; this pario knows schema 3 and older): use that pario, or "
        "choose another --db"),
    # tester 22, item 11: a version no pario writes was 'migrated' to 3
    (-1, "has schema version -1, which no pario writes: restore it from a copy, or choose another --db")])
@pytest.mark.parametrize("args", [["list"], ["show", "1"], ["export", "1", "--csv"],
                                  ["run", "cfs", *SMALL, "--dir", "{dir}"],
                                  ["model", "cfs", *SMALL, "--machine", "ipsc860"]])
def test_a_database_of_a_newer_pario_is_refused_untouched(failed_and_predicted, shm_dir, tmp_path, args,
                                                           version, said):
    """Item 2: a schema-7 file took a run from this schema-3 pario with exit
    0, and a newer column it did not know ended in 'NOT NULL constraint
    failed'."""
    import hashlib
    import sqlite3

    db = tmp_path / "newer.sqlite"
    db.write_bytes(failed_and_predicted["db"].read_bytes())
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    r = pario(*[a.replace("{dir}", str(shm_dir)) for a in args], db=db)
    assert r.returncode == 2 and r.stderr == f"pario: error: PARIO_DB {db} {said}\n", r.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert list(shm_dir.iterdir()) == []


def test_a_running_run_is_told_from_one_whose_pid_went_to_another_process(tmp_path):
    """Item 7: liveness was 'some process has the pid', so a run killed
    with kill -9 whose pid the system gave again stayed 'running' for
    ever (and compare refused it as unfinished)."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys

    from conftest import ROOT, wait_for

    db, mark = tmp_path / "r.sqlite", tmp_path / "launched"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    run = subprocess.Popen([sys.executable, "-m", "pario", "run", "cfs", *SMALL, "--dir", str(tmp_path),
                            "--launcher-template", f"sh -c 'touch {mark}; exec sleep 60' {{ranks}} {{engine}} "
                            "{engine_args}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    others = []
    try:
        assert wait_for(mark.exists, 60)

        def status():
            return pario("list", db=db).stdout.splitlines()[1].split()[2]

        assert status() == "running"  # its own process, started before it
        for argv, began in ((["sleep", "60"], "2099-01-01T00:00:00Z"),   # older than the run, not pario
                            ([sys.executable, "-c", "import time; time.sleep(60)", "pario"],
                             "2026-01-01T00:00:00Z")):                    # pario, but younger than the run
            others.append(subprocess.Popen(argv))
            con = sqlite3.connect(db)
            con.execute("UPDATE runs SET pid=?, started_utc=?", (others[-1].pid, began))
            con.commit()
            con.close()
            assert status() == "incomplete", argv
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # pario and the template's sleep
        for p in [run, *others]:
            p.kill()
            p.wait()


def test_plots_cut_short_by_a_full_disk_say_how_many_were_written(shm_dir, tmp_path, small_tmpfs):
    """Item 6: the error named the plot that did not fit and nothing of the
    ones already written beside it."""
    db = tmp_path / "r.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--tests", "partitioned,interleaved", "--ranks", "1", "--blocks",
              "64k", "--size", "1m", "--iterations", "1", "--out", tmp_path / "plots", db=db)
    assert r.returncode == 0, r.stderr
    sizes = sorted(p.stat().st_size for p in (tmp_path / "plots").rglob("*.png"))
    assert len(sizes) == 4, sizes
    full = small_tmpfs("1m")
    room = sizes[-1] + 4096  # one plot fits, the rest do not
    (full / "filler").write_bytes(b"\0" * (os.statvfs(full).f_bavail * 4096 - room))
    got = pario("plot", "1", "--out", full / "pl", db=db)
    written = sorted(p.name for p in (full / "pl").iterdir())
    assert got.returncode == 2 and 1 <= len(written) < 4, (got.stderr, written)
    assert got.stderr.endswith(f"No space left on device): choose another path ({len(written)} of 4 plots were "
                               f"written to {full / 'pl'} before it, the others not: plotting again replaces "
                               "pario's own)\n"), got.stderr


def test_a_ratio_that_two_decimals_would_put_on_the_25_percent_line_gets_three():
    """Item a: 0.747 ('no') and 0.753 ('yes') both printed 0.75."""
    from pario.compare_runs import _ratio

    assert [_ratio(x) for x in (0.747, 0.753, 1.2496, 1.2504, 0.80, 1.10, 1.2500001)] == \
        ["0.747", "0.75", "1.25", "1.2504", "0.80", "1.10", "1.2500001"]


def test_a_report_onto_an_existing_file_is_refused_before_it_is_built(failed_and_predicted, tmp_path,
                                                                       monkeypatch, capsys):
    """Item b: the report of 8 runs was built (4.8 s) before its --out was
    found taken."""
    import pario.report.build as build
    from pario.cli import main

    def never(*args, **kwargs):
        raise AssertionError("the report was built")

    monkeypatch.setattr(build, "build_report", never)
    taken = tmp_path / "taken.html"
    taken.write_text("mine")
    assert main(["report", "1", "2", "--out", str(taken), "--db", str(failed_and_predicted["db"])]) == 2
    assert capsys.readouterr().err == (f"pario: error: --out {taken} already exists: pario writes only a new file "
                                       "here, never over one (nor through a symlink); choose a new name or "
                                       "remove it\n")
    assert taken.read_text() == "mine"


def test_a_report_says_a_measured_run_beside_its_prediction_is_incomplete(shm_dir, tmp_path):
    """Item c: `compare` warned that only the stored points of an incomplete
    run are compared; the report's measured-against-predicted table did not."""
    import sqlite3

    db = tmp_path / "r.sqlite"
    for args in (("run", "cfs", *SMALL, "--dir", shm_dir, "--iterations", "1", "--out", tmp_path / "plots"),
                 ("model", "cfs", *SMALL, "--machine", "ipsc860")):
        r = pario(*args, db=db)
        assert r.returncode == 0, r.stderr
    con = sqlite3.connect(db)  # as a run stopped after its points so far
    con.execute("UPDATE runs SET status='incomplete' WHERE id=1")
    con.commit()
    con.close()
    out = tmp_path / "r.html"
    assert pario("report", "1", "2", "--out", out, db=db).returncode == 0
    said = ("warning: run 1 is incomplete (it did not finish its plan): only the points it stored are compared")
    assert said in out.read_text() and said in pario("compare", "1", "2", db=db).stdout
    # item i: each run's section numbers the experiment's figures with its run
    page = out.read_text()
    assert "<figcaption>Run 1, Figure 6. " in page and "<figcaption>Run 2, Figure 6. " in page
    assert "<figcaption>Figure 6. " not in page


@pytest.mark.parametrize("command,said", [(["export", "1", "--csv"], "exported run 1 to "),
                                          (["report", "1"], "report of run(s) 1: ")])
def test_export_and_report_to_a_file_run_with_standard_output_closed(failed_and_predicted, tmp_path, command,
                                                                     said):
    """Item f: both write only their --out, yet were refused for a closed
    standard output; and each says what it wrote on stderr (the report
    said it on stdout)."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    out = tmp_path / ("e.csv" if command[0] == "export" else "r.html")
    p = subprocess.run([sys.executable, "-m", "pario", *command, "--out", str(out), "--db",
                        str(failed_and_predicted["db"])], capture_output=False, stderr=subprocess.PIPE,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                       preexec_fn=lambda: os.close(1), timeout=120)
    assert p.returncode == 0 and p.stderr.endswith(f"{said}{out}\n"), p.stderr
    assert out.stat().st_size > 0
    listed = subprocess.run([sys.executable, "-m", "pario", "list", "--db", str(failed_and_predicted["db"])],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                            preexec_fn=lambda: os.close(1), timeout=120)
    assert listed.returncode == 2 and "standard output is closed" in listed.stderr


def test_runs_apart_in_their_flags_name_each_list_of_flags_whole(shm_dir, tmp_path):
    """Item j: 'every point differs in extra (--evict, --prealloc --evict
    against none, --prealloc --no-fsync)' read as words, not as lists."""
    db = tmp_path / "r.sqlite"
    for extra in ((), ("--cached", "--no-fsync")):
        r = pario("run", "cfs", *SMALL, "--dir", shm_dir, "--iterations", "1", "--out", tmp_path / "p", *extra,
                  db=db)
        assert r.returncode == 0, r.stderr
    r = pario("compare", "1", "2", db=db)
    assert r.returncode == 2 and "every point differs in extra ([--prealloc --evict] against " \
        "[--prealloc --no-fsync])" in r.stderr, r.stderr


def test_an_experiment_file_s_run_stored_without_its_text_is_one_line(shm_dir, tmp_path):
    """Tester 22, item 7: such a run (an older pario kept no file text)
    got `pario run`'s advice: "preset 'mine' is unknown: use one of ..."."""
    import sqlite3

    f = tmp_path / "mine.toml"
    f.write_text('name = "mine"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\niterations = 1\n'
                 '[[test]]\nid = "t"\nlayout = "partitioned"\nphases = ["write"]\n')
    db = tmp_path / "r.sqlite"
    assert pario("run", f, "--dir", shm_dir, "--out", tmp_path / "p", db=db).returncode == 0
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET experiment_toml = NULL, experiment_origin = NULL")
    con.commit()
    con.close()
    for args in (["show", "1"], ["plot", "1", "--out", tmp_path / "q"], ["report", "1", "--out", tmp_path / "r.html"]):
        r = pario(*args, db=db)
        assert r.returncode == 2 and r.stderr == (
            "pario: error: run 1 is of an experiment file named mine, which the older pario that stored it did "
            "not keep: this pario cannot read its figures; 'pario list' and runs of shipped presets still "
            "work\n"), (args, r.stderr)


def test_a_prediction_of_an_experiment_file_names_the_file(shm_dir, tmp_path):
    """Tester 22, item 9: the model said 'of preset at', and compare's
    advice was 'pario model at ...', which fails ('preset unknown')."""
    f = tmp_path / "at.toml"
    f.write_text('name = "at"\n[sweep]\nranks = [1]\nblocks = ["64k", "1m"]\nsize = "2m"\niterations = 1\n'
                 '[[test]]\nid = "t"\nlayout = "partitioned"\nphases = ["write"]\n')
    db = tmp_path / "r.sqlite"
    assert pario("run", f, "--dir", shm_dir, "--blocks", "64k", "--out", tmp_path / "p", db=db).returncode == 0
    m = pario("model", f, "--machine", "ipsc860", "--blocks", "1m", db=db)
    assert m.returncode == 0 and f"run 2: 1 point of experiment at ({f}) predicted" in m.stdout, m.stdout
    c = pario("compare", "1", "2", db=db)
    assert c.returncode == 2 and f"e.g. 'pario model {f} --ranks ... --machine ...'" in c.stderr, c.stderr
