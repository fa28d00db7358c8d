"""What the engine would refuse at every point is refused once, before the
first point, by the engine's own parsers (`pario-engine check`, called by
`pario run` and `pario model`); and no option is accepted without effect
(tester report 2, items 11, 12, 20 and 25b/c/m/n).  Every refusal: one
line, exit 2, nothing stored."""

import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "src"))
from pario.cli import main  # noqa: E402


def _check(engine, lines):
    """`pario-engine check` on (ranks, [args]) lines: [(code, message)]."""
    text = "".join("\t".join(str(w) for w in (r, *args)) + "\n" for r, args in lines)
    p = subprocess.run([engine, "check"], input=text, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = [line.split("\t", 1) for line in p.stdout.splitlines()]
    return [(int(c), m) for c, m in out]


IO = ["io", "--dir", "/nonexistent-dir-is-not-checked", "--block", "64k", "--size", "1m",
      "--json", "/nonexistent-dir/r.json"]


def test_engine_check_answers_each_line_with_the_parsers_own_verdict(engine, tmp_path):
    """Accepted lines answer 0; refused ones the very line the run would
    print; the rank count is the plan's; directories, free space and output
    files are the machine's part and not looked at; nothing is created."""
    answers = _check(engine, [
        (2, IO),
        (1, [*IO, "--api", "mpiio", "--direct"]),
        (1, [*IO, "--iterations", "100000000"]),
        (1, ["io", "--dir", "d", "--block", "3g", "--size", "6g"]),
        (2, [*IO, "--read-shift", "2"]),                       # a shift of the rank count
        (4, [*IO, "--read-shift", "2"]),                       # ...accepted with 4 ranks
        (1, [*IO[:5], "--size", "1p", *IO[7:]]),              # free space: not the check's part
        (1, [*IO, "--fsync", "--no-fsync"]),
        (1, [*IO, "--no-huge-pages", "--huge-pages"]),
        (1, [*IO, "--api", "mpiio", "--hint", "cb_nodes=abc"]),
        (1, [*IO, "--api", "hdf5", "--hdf5-chunk", "3"]),
        (1, ["bonnie", "--dir", "d", "--chunk", "1"]),
        (4, ["laplace", "--dir", "d", "--grid", "3"]),          # 4 ranks, 3 rows
        (4, ["bt", "--class", "S"]),
        (3, ["bt", "--class", "S", "--decomposition", "multipartition"]),
        (1, ["verify", "--file", "x", "--seed", "1"]),          # no check: never run
        (0, ["io"]),
    ])
    codes = [c for c, _ in answers]
    assert codes == [0, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2, 2, 2, 0, 2, 2, 2], answers
    assert answers[1][1] == "--api mpiio cannot do direct I/O: drop --direct"
    assert answers[2][1] == "--iterations 100000000 is more than 100000: use fewer"
    assert answers[3][1] == "--block is larger than 2 GiB: use at most 2g per call"
    assert "less than the 2 ranks started" in answers[4][1]
    assert answers[7][1] == "--fsync and --no-fsync exclude each other: give one"
    assert answers[8][1] == "--huge-pages and --no-huge-pages exclude each other: give one"
    assert "MPI defines cb_nodes as a whole number" in answers[9][1]
    assert "--hdf5-chunk 3 B is under 2 KiB" in answers[10][1] and "give at least 2k" in answers[10][1]
    assert "--chunk '1'" in answers[11][1]
    assert "does not split over 4 ranks" in answers[12][1]
    assert "square rank count" in answers[14][1]
    assert "'verify' has no check" in answers[15][1]
    assert "RANKS" in answers[16][1]
    assert not os.path.exists("/nonexistent-dir-is-not-checked")


def test_engine_check_reads_escaped_fields(engine, tmp_path):
    odd = tmp_path / "a\tb"
    (code, message), = _check(engine, [(1, ["io", "--dir", str(odd).replace("\t", "\\t"),
                                            "--block", "64k", "--size", "1m", "--layout", "spiral"])])
    assert code == 2 and message.startswith("--layout 'spiral' is unknown")


NOTHING = [  # item 20: options that would be accepted and do nothing
    (["--api", "mpiio", "--hint", "cb_nodes=abc"], "MPI defines cb_nodes as a whole number"),
    (["--api", "mpiio", "--hint", "collective_buffering=yes"], "MPI defines collective_buffering as true or false"),
    (["--api", "mpiio", "--hint", "chunked=4,x"], "MPI defines chunked as a comma-separated list"),
    (["--api", "hdf5", "--hdf5-chunk", "3"], "--hdf5-chunk 3 B is under 2 KiB"),
    (["--api", "hdf5", "--block", "4m", "--size", "8m", "--hdf5-chunk", "4k"],
     "splits each --block 4 MiB into more than the 521 chunks"),
    (["--huge-pages", "--no-huge-pages"], "--huge-pages and --no-huge-pages exclude each other"),
]


def test_options_that_would_do_nothing_are_refused(engine):
    """The parser's verdicts, through the check (the very code a run parses
    with; a run by hand starts MPI first, seconds per case)."""
    def line(args):  # a case's own --block/--size stand instead of the defaults (each once)
        defaults = [w for opt, v in (("--block", "64k"), ("--size", "1m")) if opt not in args
                    for w in (opt, v)]
        return ["io", "--dir", "d", *defaults, *args]
    answers = _check(engine, [(2, line(args)) for args, _ in NOTHING])
    for (code, message), (args, phrase) in zip(answers, NOTHING):
        assert code == 2 and phrase in message, (args, message)


def test_the_engine_run_by_hand_refuses_the_same(engine, shm_dir):
    p = subprocess.run([engine, "io", "--dir", str(shm_dir), "--block", "64k", "--size", "1m",
                        "--fsync", "--no-fsync"], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and lines == ["pario-engine: error: --fsync and --no-fsync exclude "
                                           "each other: give one"], p.stderr
    assert os.listdir(shm_dir) == []


def test_hint_lists_and_booleans_of_the_mpi_standard_pass(engine, shm_dir):
    (code, message), = _check(engine, [(2, ["io", "--dir", str(shm_dir), "--api", "mpiio", "--block",
                                            "64k", "--size", "1m", "--hint", "chunked=64,64",
                                            "--hint", "collective_buffering=true",
                                            "--hint", "romio_cb_write=enable"])])
    assert code == 0, message
    (code, message), = _check(engine, [(2, ["bt", "--class", "S", "--io", "collective", "--dir", "d",
                                            "--hint", "striping_factor=0"])])
    assert code == 2 and "MPI defines striping_factor as a whole number" in message


def _pario(capsys, db, *args):
    """pario in this process (no interpreter start per case): (code, stderr lines)."""
    try:
        code = main([*map(str, args), *(["--db", str(db)] if "--db" not in args else [])])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


def _stored(db):
    if not db.exists():
        return 0
    return sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


FRONT = [
    # item 11: what every point's engine refuses, before the first point
    (["run", "ascired-api", "--quick", "--tests", "large-mpiio,large-stdio-8k", "--direct"],
     ["the engine refuses test large-stdio-8k", "--api stdio cannot do direct I/O: drop --direct",
      "; test large-mpiio", "--api mpiio cannot do direct I/O: drop --direct"]),
    (["run", "ascired-load", "--quick", "--tests", "cpu-load", "--iterations", "100000000"],
     ["test cpu-load (3 of 3 points): --iterations 100000000 is more than 100000: use fewer"]),
    (["run", "ascired-load", "--quick", "--tests", "cpu-load", "--blocks", "3g", "--size", "6g"],
     ["--block is larger than 2 GiB: use at most 2g per call"]),
    (["run", "probe", "--quick", "--iterations", "101"], ["--iterations '101' must be a whole number from 1 to 100"]),
    (["model", "cfs", "--machine", "ipsc860", "--quick", "--tests", "partitioned", "--blocks", "3g",
      "--size", "6g"], ["test partitioned", "--block is larger than 2 GiB"]),
    # item 20: accepted and without effect -> refused by name
    (["run", "bonnie", "--quick", "--ranks", "1,2,4"], ["--ranks does not apply: bonnie runs one process",
                                                        "drop --ranks"]),
    (["run", "sgi750", "--quick", "--tests", "bonnie", "--ranks", "4"], ["--ranks does not apply: bonnie"]),
    (["probe", "--quick", "--tests", "x"], ["--tests does not apply: the probe has no tests", "drop --tests"]),
    (["model", "cfs", "--machine", "ipsc860", "--quick", "--direct"],
     ["--direct acts on real files and does not apply to pario model: drop it"]),
    (["run", "cfs", "--quick", "--launcher", "mpirun", "--launcher-template",
      "mpirun -np {ranks} {engine} {engine_args}"],
     ["--launcher mpirun and --launcher-template both say how to start the ranks: give one"]),
    (["run", "cfs", "--quick", "--prealloc", "--no-prealloc"],
     ["--prealloc and --no-prealloc exclude each other: give one"]),
    # item 25b: run's --out is a plots directory, not report's .html file
    (["run", "cfs", "--quick", "--out", ""], ["--out is empty: give a value or leave the option out"]),
]


@pytest.mark.parametrize("args,phrases", FRONT, ids=[" ".join(a[:2] + a[-2:]) for a, _ in FRONT])
def test_front_end_refuses_before_the_first_point(capsys, tmp_path, shm_dir, args, phrases):
    db = tmp_path / "r.sqlite"
    extra = ["--dir", shm_dir] if args[0] in ("run", "probe") else []
    code, err = _pario(capsys, db, *args, *extra)
    assert code == 2 and len(err) == 1, err
    assert all(p in err[0] for p in phrases), err[0]
    assert ".html" not in err[0]
    assert _stored(db) == 0 and os.listdir(shm_dir) == []


def test_an_unknown_option_points_at_its_subcommands_help(capsys, tmp_path):
    """Item 25c: 'see pario model --help', not 'pario --help'."""
    with pytest.raises(SystemExit) as e:
        main(["model", "cfs", "--machine", "ipsc860", "--dry-run", "--db", str(tmp_path / "r.sqlite")])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1
    assert "unrecognized arguments: --dry-run" in err[0] and err[0].endswith("see 'pario model --help'")
    assert not (tmp_path / "r.sqlite").exists()


def test_model_help_lists_only_what_the_model_takes(capsys):
    with pytest.raises(SystemExit):
        main(["model", "--help"])
    out = capsys.readouterr().out
    for gone in ("--servers", "--stream-blocks", "--classes", "--write-interval", "--groups",
                 "--direct", "--evict", "--verify", "--prealloc"):
        assert not re.search(rf"^\s+{gone}\b", out, re.M), gone
    listed = {m for m in re.findall(r"^\s+(--[a-z-]+)", out, re.M)}
    assert {"--blocks", "--no-fsync", "--iterations", "--machine"} <= listed


def test_a_plan_shows_the_engines_refusal_as_a_warning_in_a_dry_run(capsys, tmp_path, shm_dir):
    code = main(["run", "ascired-load", "--quick", "--tests", "cpu-load", "--dir", str(shm_dir),
                 "--iterations", "100000000", "--dry-run", "--db", str(tmp_path / "r.sqlite")])
    out = capsys.readouterr().out
    assert code == 0 and "plan: warning: the engine refuses test cpu-load" in out


def test_an_engine_that_answers_no_check_is_refused_up_front(capsys, tmp_path, shm_dir, monkeypatch):
    """PARIO_ENGINE=/bin/true used to fail every point with 'exit code 0'."""
    monkeypatch.setenv("PARIO_ENGINE", "/bin/true")
    code, err = _pario(capsys, tmp_path / "r.sqlite", "run", "cfs", "--quick", "--dir", shm_dir)
    assert code == 2 and len(err) == 1 and "/bin/true gave no answer to 'pario-engine check'" in err[0]
    assert _stored(tmp_path / "r.sqlite") == 0


def test_a_launch_without_a_result_says_so(capsys, tmp_path, shm_dir):
    """Item 25n: a template that runs something else fails its point by
    saying no result document was written, not 'exit code 0'."""
    db = tmp_path / "r.sqlite"
    code = main(["run", "cfs", "--dir", str(shm_dir), "--ranks", "1", "--blocks", "64k", "--size", "1m",
                 "--tests", "partitioned", "--iterations", "1", "--db", str(db),
                 "--launcher-template", "echo {ranks} {engine} {engine_args}"])
    capsys.readouterr()
    assert code == 3
    (error,) = sqlite3.connect(db).execute("SELECT error FROM points").fetchone()
    assert error == ("the launch ended with code 0 but the engine wrote no result document: check "
                     "that --launcher-template runs {engine} {engine_args}")


def test_a_group_that_cannot_act_is_warned_about_by_the_engine(run_io, shm_dir):
    """Item 25m: --group 5 on 2 ranks runs ungrouped, and says so."""
    r = run_io(2, "--dir", shm_dir, "--block", "64k", "--size", "1m", "--iterations", "1",
               "--group", "5")
    warning = "--group 5 with 2 rank(s): all ranks do I/O at once, so this run is ungrouped"
    assert any(w.startswith(warning) for w in r.result["warnings"]), r.result["warnings"]
    assert "warning: " + warning in r.stdout


def test_the_plans_own_grouping_note_is_not_repeated_from_the_engine(capsys, tmp_path, shm_dir):
    db = tmp_path / "r.sqlite"
    assert main(["run", "cfs", "--dir", str(shm_dir), "--ranks", "1", "--blocks", "64k", "--size", "1m",
                 "--tests", "partitioned-g16", "--iterations", "1", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "group 16 cannot act" in out
    (result,) = sqlite3.connect(db).execute("SELECT result_json FROM points").fetchone()
    assert not any(w.startswith("--group") for w in json.loads(result)["warnings"])


@pytest.mark.parametrize("api", ["posix", "uring"])
def test_a_block_above_256m_runs_on_a_per_call_api(run_io, shm_dir, api):
    """Item 12: the default transfer buffer limits only whole-list calls."""
    depth = ["--queue-depth", "1"] if api == "uring" else []
    r = run_io(1, "--dir", shm_dir, "--api", api, *depth, "--block", "384m", "--size", "384m",
               "--iterations", "1", "--phases", "write", "--no-fsync")
    assert r.result["phases"][0]["iterations"][0]["bytes"] == 384 << 20


def test_model_no_fsync_and_iterations_take_effect(capsys, tmp_path):
    """Item 20 named them as without effect on ipsc860: both act, by little
    there (10 I/O nodes of 1 MB cache against a 32 MiB file)."""
    db = tmp_path / "r.sqlite"
    plan = ["model", "cfs", "--machine", "ipsc860", "--quick", "--ranks", "2", "--blocks", "64k",
            "--tests", "partitioned", "--db", str(db), "--out", str(tmp_path / "plots")]
    assert main([*plan, "--iterations", "2"]) == 0
    assert main([*plan, "--no-fsync"]) == 0
    capsys.readouterr()
    con = sqlite3.connect(db)
    docs = [json.loads(r) for (r,) in con.execute("SELECT result_json FROM points ORDER BY id")]
    fsync_write, read = docs[0]["phases"][0]["iterations"][0], docs[0]["phases"][1]["iterations"]
    assert read[1]["seconds"] != read[0]["seconds"]  # the caches carried over into trial 2
    no_fsync_write = docs[1]["phases"][0]["iterations"][0]
    assert no_fsync_write["seconds"] < fsync_write["seconds"]  # no wait for the last write-back
