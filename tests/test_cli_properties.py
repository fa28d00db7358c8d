"""Property: every option of every `pario` subcommand, found by walking the
argparse parser (so options added later are covered without touching this
file), answers generated bad values with one line on stderr and a non-zero
exit; whatever the value, there is never a traceback, nothing is stored and
no file is left behind.

`run` is driven with --dry-run, so a value that happens to be valid plans
the study and launches nothing.  The CLI is called in-process (fast); the
values include what a shell can hand Python: non-UTF-8 bytes (decoded as
surrogates), control characters, huge numbers, over-long paths."""

import argparse
import contextlib
import io
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pario import cli
from pario.presets import load_experiment, preset_names
from pario.store import Store
from pario.studies import kind_of, kinds

# Bad for every option that takes a value: empty, not UTF-8, control
# characters, longer than any path may be.
ALWAYS_BAD = ["", "a\udcffb", "a\nb", "\t", "x" * 5000]
# Often bad, sometimes valid: the run must then go on without harm.
TRICKY = ["-1", "0", "nan", "inf", "-inf", "1e400", "9" * 30, ",", ",,", "..", "/", ".",
          "/etc/passwd", "/proc/pario", "/nonexistent/x", "{ranks}", "'", '"', "--", "-",
          "1,,2", "1.5", "0x10", "9999999999999999999999p", "S,Q", "64k,", "~", "$HOME"]


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def _targets():
    """(subcommand, action) for every option and positional of every subcommand."""
    found = []
    for name, sub in _subparsers(cli.build_parser()).items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            found.append((name, action))
    return found


TARGETS = _targets()


def _loadable_presets():
    """Shipped presets that load (a broken one is test_front_end's to report)."""
    found = {}
    for n in preset_names():
        try:
            found[n] = kind_of(load_experiment(n).data)
        except Exception:  # noqa: BLE001
            continue
    return found


def _preset_taking(dest):
    """A shipped preset whose kind takes the option (else cfs)."""
    presets = _loadable_presets()
    for kind in kinds().values():
        if any(o.dest == dest for o in kind.options):
            for n, k in presets.items():
                if k is kind:
                    return n
    return "cfs" if "cfs" in presets else next(iter(presets))


def _argv(sub, action, value, directory):
    if sub == "run":
        base = ["run", _preset_taking(action.dest), "--dir", str(directory), "--dry-run"]
        if not action.option_strings:  # the experiment itself
            base = ["run", value, "--dir", str(directory), "--dry-run"]
            return base
    else:
        base = [sub]
    if not action.option_strings:
        return base + [value]
    flag = max(action.option_strings, key=len)
    return base + [f"{flag}={value}"]  # '=' binds a value that starts with '-'


def _stored_db(db):
    """A pario database holding one finished run (no points), as list,
    show and plot meet it on a user's machine."""
    db.parent.mkdir(parents=True)
    exp = load_experiment("cfs")
    store = Store(db)
    run_id = store.start_run("cfs", "t", "/nonexistent", ["pario"], {}, "mpirun", "0",
                             kind="io", experiment_toml=exp.text, experiment_origin="cfs")
    store.finish_run(run_id)
    store.close()


def _runs_in(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    finally:
        con.close()


def _run(argv, cwd, db):
    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_db = os.getcwd(), os.environ.get("PARIO_DB")
    os.chdir(cwd)
    os.environ["PARIO_DB"] = str(db)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exc:  # argparse's own exit
                code = exc.code
    finally:
        os.chdir(old_cwd)
        if old_db is None:
            os.environ.pop("PARIO_DB", None)
        else:
            os.environ["PARIO_DB"] = old_db
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_option_answers_bad_values_in_one_line(data):
    sub, action = data.draw(st.sampled_from(TARGETS), label="option")
    always_bad = data.draw(st.booleans(), label="always bad")
    if always_bad:
        value = data.draw(st.sampled_from(ALWAYS_BAD), label="value")
    else:
        value = data.draw(st.one_of(
            st.sampled_from(TRICKY),
            st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                    max_size=12)), label="value")
    existing = data.draw(st.booleans(), label="database exists")
    work = Path(tempfile.mkdtemp(prefix="pario-prop-"))
    try:
        cwd, target, db = work / "cwd", work / "dir", work / "db" / "r.sqlite"
        cwd.mkdir()
        target.mkdir()
        if existing:
            _stored_db(db)
        code, out, err = _run(_argv(sub, action, value, target), cwd, db)  # a traceback fails here
        lines = err.strip().splitlines()
        if always_bad or code != 0:
            assert code not in (0, None), (sub, action.dest, value, out, err)
            assert len(lines) == 1 and lines[0].startswith("pario: "), (sub, action.dest, value, err)
        assert "Traceback" not in err
        assert os.listdir(cwd) == [] and os.listdir(target) == [], "a file was left behind"
        if existing:
            assert _runs_in(db) == 1, "something was stored"
            assert {p.name for p in db.parent.iterdir()} == {db.name}  # no journal left beside it
        else:
            assert not db.exists() and not db.parent.exists(), "something was stored"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_walk_finds_every_subcommand_and_option():
    """The property above covers what the parser has, whatever that is."""
    names = {(s, a.dest) for s, a in TARGETS}
    assert {("run", "dir"), ("run", "timeout"), ("run", "db"), ("run", "experiment"),
            ("show", "run"), ("plot", "out"), ("list", "db")} <= names
    assert {s for s, _ in TARGETS} >= {"run", "list", "show", "plot"}


@pytest.mark.parametrize("argv", [["show", "9" * 30], ["plot", "--out=/proc/pario"],
                                  ["plot", "--out=/etc/passwd"], ["list", "--db=/proc"]])
def test_found_by_the_walk_with_a_database_present(tmp_path, argv):
    """Cases the property found once a database existed: each one line now."""
    db = tmp_path / "db" / "r.sqlite"
    _stored_db(db)
    (tmp_path / "cwd").mkdir()
    code, out, err = _run(argv, tmp_path / "cwd", db)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("pario: error:"), err
    assert _runs_in(db) == 1
