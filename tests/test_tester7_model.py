"""Tester report 7's findings on `pario model`, each with its bad input,
through the real front end on small sizes."""

import re
import sqlite3

import pytest

from test_front_end import pario


def _runs(db):
    if not db.exists():
        return []
    return sqlite3.connect(db).execute("SELECT id, status FROM runs").fetchall()


def test_a_plan_of_more_calls_than_the_model_simulates_is_refused_at_once(tmp_path):
    """A broadcast of 1 GiB at 1024 ranks is a million 1 MiB calls per
    phase: no stripe unit brings that under the limit, and the search for
    one never ended (the command ran for a quarter of an hour with no
    word).  Now one line naming the calls and the options that shrink
    them, exit 2, nothing stored; the subprocess's timeout fails the test
    if the search comes back."""
    db = tmp_path / "r.sqlite"
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1024", "--blocks", "1m", "--size", "1g",
              "--tests", "broadcast", db=db, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert "broadcast ranks=1024 block=1 MiB makes 1048576 calls per phase (1 TiB in 1 MiB calls)" in lines[0]
    assert "use larger --blocks or a smaller --size, or fewer --ranks" in lines[0], lines[0]
    assert _runs(db) == []
    # the same point in calls of 4 MiB is 262144 calls: within the limit,
    # and refused for its stripe unit (4 KiB) instead, naming the one that fits
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1024", "--blocks", "4m", "--size", "1g",
              "--tests", "broadcast", db=db, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert "use --set stripe.unit=4m or more" in lines[0], lines[0]
    assert _runs(db) == []


def test_a_phase_of_more_calls_than_the_model_simulates_is_refused_for_any_layout(tmp_path):
    """The same search for a partitioned file of 2 GiB in 4 KiB calls (the
    tester's first case): 524288 calls, one line, nothing stored."""
    db = tmp_path / "r.sqlite"
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1", "--blocks", "4k", "--size", "2g",
              "--tests", "partitioned", db=db, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert "makes 524288 calls per phase (2 GiB in 4 KiB calls)" in lines[0], lines[0]
    assert "fewer --ranks" not in lines[0]  # only a broadcast's ranks each read the whole file
    assert _runs(db) == []


def test_a_probe_run_id_past_any_stored_one_is_one_line():
    """probe:99999999999999999999999 was a traceback (an int too large for
    SQLite); now the line every other malformed id gets."""
    from pario.errors import UsageError
    from pario.model.machine import machine_by_spec

    for spec in ("probe:99999999999999999999999", f"probe:{1 << 63}"):
        with pytest.raises(UsageError, match=r"give a probe run's id, e.g. probe:7"):
            machine_by_spec(spec, store=None)


def test_dir_in_pario_model_is_refused_by_its_name(tmp_path):
    """'pario run --dir' by habit was taken as an abbreviation of --direct
    ('unrecognized arguments', or '--direct acts on real files')."""
    db = tmp_path / "r.sqlite"
    for args in (["--dir", tmp_path], [f"--dir={tmp_path}"]):
        r = pario("model", "cfs", "--quick", "--machine", "ipsc860", *args, db=db)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert lines[0] == ("pario: error: --dir is where 'pario run' measures; pario model measures "
                            "nothing: drop it (a probe's directory is in its run: --machine probe:RUN)")
    assert _runs(db) == []


def test_the_model_predicts_the_points_a_run_measures(tmp_path):
    """ascired-shared draws only its own figures, so 'pario run --quick'
    leaves out the 1-rank 64 and 256 KiB points no figure shows; the model
    predicted them too (36 points against the run's 28, 'only predicted'
    in compare).  Now the same plan, and the same skip lines."""
    db = tmp_path / "r.sqlite"
    model = pario("model", "ascired-shared", "--quick", "--machine", "asci-red", db=db)
    assert model.returncode == 0, model.stderr
    run = pario("run", "ascired-shared", "--quick", "--dry-run", "--dir", tmp_path, db=tmp_path / "d.sqlite")
    assert run.returncode == 0, run.stderr
    skips = lambda out: sorted(l for l in out.splitlines() if "no figure of ascired-shared shows it" in l)
    assert skips(model.stdout) == skips(run.stdout) and len(skips(run.stdout)) == 1, model.stdout
    assert skips(run.stdout)[0].startswith("plan: skipping 8 points (")  # one line for the 8 (tester 20, item 7)
    labels = sqlite3.connect(db).execute("SELECT count(*) FROM points").fetchone()[0]
    assert labels == 28
    r = pario("model", "ascired-shared", "--quick", "--ranks", "1", "--blocks", "64k", "--machine", "asci-red",
              db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "no point of the plan is shown by a figure of ascired-shared" in lines[0], lines[0]


MODEL4 = ["model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "4", "--blocks", "64k"]


@pytest.mark.parametrize("setting,phrase", [
    ("agent.overhead=100s", "it is a service agent's cost, and no point's calls go through service agents"),
    ("agent.copy_rate=1k/s", "it is a service agent's cost"),
    ("agent.message_rate=1k/s", "no point has ranks beyond its aggregators"),
    ("agent.munix_overhead=5", "no point runs in MUNIX through agents"),
    ("agent.mode=munix", "it is the mode of calls through service agents by APIs other than mpiio/hdf5"),
])
def test_an_agents_cost_on_a_machine_without_agents_is_refused(tmp_path, setting, phrase):
    """Item 7: ipsc860 has no service agents and this plan no collective
    points, so these --set values predicted exactly the baseline and were
    stored as a what-if; one line now, nothing stored."""
    db = tmp_path / "r.sqlite"
    r = pario(*MODEL4, "--machine", "ipsc860", "--set", setting, db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert f"--set {setting} does not act on cfs: " in lines[0] and phrase in lines[0], lines[0]
    assert _runs(db) == []


def test_an_agents_cost_where_agents_are_acts(tmp_path):
    """The same settings act on asci-red (its fyods) and on a collective
    plan of ipsc860 (its aggregators act as agents): stored, and changed."""
    db = tmp_path / "r.sqlite"
    base = pario(*MODEL4, "--machine", "asci-red", db=db)
    slow = pario(*MODEL4, "--machine", "asci-red", "--set", "agent.overhead=50ms", db=db)
    assert base.returncode == 0 and slow.returncode == 0, slow.stderr
    rates = lambda out: [float(x) for x in re.findall(r"\n\s+4\s+([0-9.]+)", out)]
    assert len(rates(base.stdout)) == 2 and min(s / b for s, b in zip(rates(slow.stdout), rates(base.stdout))) < 0.5
    r = pario("model", "ascired-servers", "--quick", "--tests", "agg-2", "--machine", "ipsc860", "--set",
              "agent.message_rate=1m/s", db=db)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", ['""', '"  "', "5", '"a\\u001b[31mb"', '"two\\nlines"'])
def test_a_machine_name_that_is_no_line_of_text_is_refused(tmp_path, name):
    """Item 9: an empty name was stored as 'model of  (from ...)', a number
    accepted, and escape bytes printed raw by model, list and show."""
    printed = pario("model", "--machine", "ipsc860", "--print-machine", db=tmp_path / "r.sqlite")
    path = tmp_path / "m.toml"
    path.write_text(re.sub(r'^name = .*$', lambda _: f"name = {name}", printed.stdout, count=1, flags=re.M))
    r = pario(*MODEL4, "--machine", path, db=tmp_path / "r.sqlite")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert f"machine {path}: 'name' must be a line of printable text" in lines[0], lines[0]


def test_refusals_name_fixes_that_work(tmp_path):
    """Item 11: a probe machine without a database was told to 'pario run',
    and ipsc860's stripe unit could not be changed alone (its cache caches
    in stripe units)."""
    r = pario("model", "cfs", "--quick", "--machine", "probe:3", db=tmp_path / "none.sqlite")
    assert r.returncode == 2 and "make one with 'pario probe --dir DIR --stream-blocks 4k,64k,1m'" in r.stderr
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1024", "--blocks", "1m", "--tests",
              "broadcast", db=tmp_path / "r.sqlite")
    assert "use --set stripe.unit=32k or more with --set io_node.cache_block=32k" in r.stderr, r.stderr
    r = pario("model", "cfs", "--machine", "ipsc860", "--ranks", "1024", "--blocks", "1m", "--tests",
              "broadcast", "--set", "stripe.unit=32k", "--set", "io_node.cache_block=32k",
              db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr


def test_a_probe_call_size_without_its_short_read_is_said_before_it_runs(tmp_path):
    """Item 12: --stream-blocks 4k,64m on a 64 MiB stream was probed and
    used by the model without a word, where the help asks for calls of at
    most an eighth of --size; now the plan says which call sizes lack their
    short read and what the model does without it."""
    r = pario("probe", "--quick", "--stream-blocks", "4k,64m", "--dir", tmp_path, "--dry-run",
              db=tmp_path / "r.sqlite")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert ("calls of 64 MiB are above an eighth of --size 64m (8 MiB): the probe measures no short stream "
            "read at them, so 'pario model' takes a read's start no further than 4 KiB calls'") in text, text
    assert not (tmp_path / "r.sqlite").exists()


def test_the_parameter_list_says_its_units_first(tmp_path):
    """Item 12: --parameters never said that MB means MiB."""
    r = pario("model", "--parameters", db=tmp_path / "r.sqlite")
    assert r.returncode == 0
    assert r.stdout.splitlines()[0].startswith("units: sizes and rates in powers of 1024 (4k = 4 KiB, 5MB = 5 MiB")


def test_a_short_phase_with_a_probe_says_what_share_its_fixed_costs_are():
    """Item 12: 'open and close costs weigh on the rate' beside '0.0% of the
    shortest phase'."""
    from pario.analysis.diagnose import rule_short_phase

    class Point:
        label = "1 rank, 4 KiB"

        def phase_seconds(self):
            return [0.004]

    class Ctx:
        probe = {"components": {"open_write_byte_close_seconds": {"best": 2e-6},
                                "barrier_seconds": {"best": 1e-6}}}
        lengthen = ""

    [f] = rule_short_phase([Point()], Ctx())
    assert f.text == ("phases as short as 4.0 ms: timer noise and each trial's start weigh on the rate; "
                      "barrier, open and close are 0.1% of the shortest phase (the probe: open/close 2 us, "
                      "barrier 1.0 us)")


def test_a_negative_bare_size_in_an_experiment_is_not_told_to_add_a_unit(tmp_path):
    """Item 11: size = -5 was told to write "-5m"."""
    exp = tmp_path / "neg.toml"
    exp.write_text('name = "neg"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = -5\n'
                   '[[test]]\nid = "p"\nlayout = "partitioned"\nphases = ["write"]\n')
    r = pario("model", exp, "--machine", "ipsc860", db=tmp_path / "r.sqlite")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "sweep.size: -5 is no size (below 0)" in lines[0] and '"-5m"' not in lines[0], lines[0]


@pytest.mark.parametrize("command", [["model", "--machine", "ipsc860"], ["run", "--dry-run", "--dir", "."]])
def test_group_unit_without_a_grouped_test_is_refused(tmp_path, command):
    """Item 7: --group-unit rank on tests without groups changed nothing
    and was accepted by model and run alike (the engine refuses it without
    --group)."""
    r = pario(command[0], "cfs", "--quick", "--tests", "partitioned,interleaved", "--group-unit", "rank",
              *command[1:], db=tmp_path / "r.sqlite")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert ("--group-unit rank acts on grouped tests (a test's group = G), and none of partitioned, "
            "interleaved is grouped") in lines[0], lines[0]
    assert not (tmp_path / "r.sqlite").exists()
    ok = pario(command[0], "cfs", "--quick", "--tests", "partitioned,partitioned-g2", "--group-unit", "rank",
               *command[1:], db=tmp_path / "r.sqlite")
    assert ok.returncode == 0, ok.stderr


def test_a_device_as_the_database_is_named_as_what_it_is(tmp_path):
    """Item 12: --db /dev/null was called 'an empty file'."""
    for args in (["list"], ["model", "cfs", "--quick", "--machine", "ipsc860"]):
        r = pario(*args, "--db", "/dev/null", db=tmp_path / "unused.sqlite")
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert "/dev/null is not a regular file (a device, pipe or socket)" in lines[0], lines[0]
