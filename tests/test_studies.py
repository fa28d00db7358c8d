"""The registry of study kinds, the figure description, experiments kept
with their runs, and the TOML schema's one-line refusals."""

import sqlite3
import sys
import textwrap

import pytest

from conftest import ROOT, assert_refused_in_one_line
from test_front_end import pario

sys.path.insert(0, str(ROOT / "src"))
from pario.figures import Figure, Param, Quantity, Record, build, format_table  # noqa: E402
from pario.studies import kinds  # noqa: E402

SRC = ROOT / "src" / "pario"


def test_shared_code_names_no_kind():
    """Runner, CLI, store, figures and plots ask the registry, never `if kind == ...`."""
    for f in ("runner.py", "cli.py", "store.py", "figures.py", "plot.py", "launch.py"):
        text = (SRC / f).read_text()
        for name in kinds():
            assert f'"{name}"' not in text and f"'{name}'" not in text, (f, name)


def test_every_kind_offers_the_whole_interface():
    for kind in kinds().values():
        assert kind.name and kind.description and kind.quantities and kind.params
        for opt in kind.options:
            assert opt.flags[0].startswith("--") and opt.kwargs.get("help")


# --- the figure description -------------------------------------------------

PARAMS = {"ranks": Param("ranks", str, "log2"), "api": Param("api"),
          "block": Param("block", lambda b: f"{b // 1024}k", "log2"),
          "aggregators": Param("aggregators", str, "linear")}
QS = {"rate": Quantity("rate", "MiB/s"), "time": Quantity("time", "s", "min", ".2f")}


def _records():
    out = []
    for api in ("posix", "mpiio"):
        for block in (4096, 65536):
            for agg in (1, 2):
                base = 100 if api == "posix" else 50
                out.append(Record({"api": api, "block": block, "aggregators": agg, "ranks": 4},
                                  {"rate": [base * agg + block / 4096, base * agg, base * agg - 10],
                                   "time": [1.0 / agg, 2.0 / agg]}))
    return out


def test_figure_any_axis_any_series_best_and_spread():
    fig = Figure(id="f", number="Figure 3", title="Rate by request size ({ranks} ranks)", x="block",
                 series="api", y="rate", where={"aggregators": 2}, spread=True)
    data = build(fig, _records(), PARAMS, QS)
    assert data.xs == [4096, 65536] and data.series == ["posix", "mpiio"]
    assert data.best(65536, "posix") == 216 and data.best(4096, "mpiio") == 101
    text = format_table(data)
    assert text.splitlines()[0] == "Figure 3. Rate by request size (4 ranks): rate in MiB/s, best of 3"
    assert "216.0 [190.0-200.0]" in text  # best, then lowest and median of the trials
    assert text.splitlines()[1].split() == ["block", "posix", "mpiio"]


def test_a_title_placeholder_of_several_values_reads_as_an_ellipsis():
    """Tester 22 (fix 21): a heading kept '{block}' where the figure spans
    several (its x axis); a sentence reads '...' there."""
    fig = Figure(id="f", title="Rate at {block} calls ({ranks} ranks)", x="block", series="api", y="rate",
                 where={"aggregators": 2})
    assert format_table(build(fig, _records(), PARAMS, QS)).splitlines()[0].startswith(
        "Rate at ... calls (4 ranks): ")


def test_figure_against_aggregators_with_a_display_unit_and_min_for_times():
    fig = Figure(id="g", title="by aggregators", x="aggregators", series=("api", "block"), y="time",
                 unit="ms")
    data = build(fig, _records(), PARAMS, QS)
    assert data.xs == [1, 2] and len(data.series) == 4
    assert data.best(2, ("posix", 4096)) == pytest.approx(500.0)   # min of 0.5 s, 1.0 s in ms
    assert data.series_labels[("mpiio", 65536)] == "mpiio, 64k"
    assert build(Figure(id="h", title="none", x="ranks", y="rate", where={"api": "hdf5"}),
                 _records(), PARAMS, QS) is None


def test_figure_plot_draws_reference_lines_and_spread(tmp_path):
    from pario.plot import Palette, plot_figure

    fig = Figure(id="z", title="zeta", x="aggregators", series="api", y="rate", spread=True,
                 lines=((120.0, "acceptable"),))
    palette = Palette()
    path = plot_figure(build(fig, _records(), PARAMS, QS), tmp_path, 7, palette)
    assert path.name == "run7-z.png" and path.read_bytes()[:4] == b"\x89PNG"
    posix, mpiio = palette.style("posix"), palette.style("mpiio")
    assert posix["color"] != mpiio["color"]
    # a later figure whose series come in the other order keeps each label's colour
    flipped = Figure(id="y", title="t", x="aggregators", series="api", y="rate", where={"api": "mpiio"})
    plot_figure(build(flipped, _records(), PARAMS, QS), tmp_path, 7, palette)
    assert palette.style("mpiio") == mpiio and palette.style("posix") == posix


# --- a run keeps its experiment --------------------------------------------

MY_TOML = """\
name = "mine"
title = "my own study"

[sweep]
ranks = [1, 2]
blocks = ["64k", "256k"]
size = "1m"
iterations = 2

[[test]]
id = "part"
title = "My Partitioned"
layout = "partitioned"
phases = ["write", "read"]

[[figure]]
id = "by-block"
title = "Write rate by block ({size} file)"
x = "block"
series = "ranks"
y = "rate"
where = { phase = "write" }
spread = true
"""


def test_a_run_of_my_own_file_shows_and_plots_after_the_file_is_gone(shm_dir, tmp_path):
    db, toml = tmp_path / "r.sqlite", tmp_path / "my.toml"
    toml.write_text(MY_TOML)
    r = pario("run", toml, "--dir", shm_dir, db=db)
    assert r.returncode == 0, r.stderr
    assert "My Partitioned Write (1 MiB file): MiB/s, best of 2" in r.stdout
    assert "Write rate by block (1 MiB file): MiB/s, best of 2" in r.stdout
    toml.unlink()
    shown = pario("show", "1", db=db)
    assert shown.returncode == 0, shown.stderr
    assert f"experiment mine ({toml})" in shown.stdout and "Write rate by block" in shown.stdout
    plotted = pario("plot", "1", "--out", tmp_path / "png", db=db)
    assert plotted.returncode == 0, plotted.stderr
    assert sorted(p.name for p in (tmp_path / "png").glob("*.png")) == [
        "run1-by-block.png", "run1-part-read.png", "run1-part-write.png"]
    con = sqlite3.connect(db)
    kind, text, origin, options = con.execute(
        "SELECT kind, experiment_toml, experiment_origin, options_json FROM runs").fetchone()
    assert kind == "io" and text == MY_TOML and origin == str(toml) and '"dir"' in options


def test_an_old_database_is_migrated_in_place_and_still_shows(shm_dir, tmp_path):
    db = tmp_path / "old.sqlite"
    r = pario("run", "cfs", "--dir", shm_dir, "--ranks", "1", "--blocks", "64k", "--size", "1m",
              "--tests", "partitioned", "--iterations", "1", db=db)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(db)  # back to the first schema: what older pario wrote
    for table, col in (("runs", "kind"), ("runs", "experiment_toml"), ("runs", "experiment_origin"),
                       ("runs", "planned_points"), ("points", "params_json")):
        con.execute(f"ALTER TABLE {table} DROP COLUMN {col}")
    con.execute("PRAGMA user_version = 0")
    con.commit()
    con.close()
    shown = pario("show", "1", db=db)
    assert shown.returncode == 0, shown.stderr
    assert "Figure 6. Partitioned Write (1 MiB file)" in shown.stdout
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 3
    cols = {row[1] for row in con.execute("PRAGMA table_info(runs)")}
    assert {"kind", "experiment_toml", "planned_points"} <= cols
    assert "points: 1 ok\n" in shown.stdout  # an older run's plan size is unknown: nothing said of it


# --- options belong to kinds ---------------------------------------------------

@pytest.mark.parametrize("preset,args,flag,taker", [
    ("cfs", ["--classes", "S"], "--classes", "bt"),
    ("cfs", ["--write-interval", "10"], "--write-interval", "bt"),
    ("nht1", ["--blocks", "4k"], "--blocks", "io"),
    ("nht1", ["--cached"], "--cached", "io"),
])
def test_an_option_of_another_kind_is_refused_naming_its_kinds(tmp_path, preset, args, flag, taker):
    db = tmp_path / "r.sqlite"
    r = pario("run", preset, "--dir", tmp_path, *args, db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert f"{flag} does not apply to {preset}" in lines[0] and f"for kind {taker}" in lines[0]
    assert not db.exists()


def test_presets_are_described_through_their_kinds():
    r = pario("presets", db="/dev/null")
    assert r.returncode == 0
    for kind in kinds().values():
        assert f"kind {kind.name}: {kind.description}" in r.stdout


# --- the TOML schema: one line naming the file and the key ---------------------

def _bad(text):
    return textwrap.dedent(text)


GOOD_HEAD = 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
GOOD_TEST = '[[test]]\nid = "t"\nlayout = "partitioned"\nphases = ["write"]\n'

BAD_FILES = [
    ("a reference test the figure does not select", 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\n'
     'size = "1m"\n' + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "t"\nx = "ranks"\ny = "rate"\n'
     'where = { test = ["t"] }\nbeside = ["u"]\n',
     "figure[1].beside: 'u' is not among the figure's where.test: beside names tests it selects"),
    # tester 20, item 8: '{nope}' stayed in the heading as written
    ("an unknown placeholder in a figure's title", 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
     + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "{nope} t"\nx = "ranks"\ny = "rate"\n',
     "figure[1].title: {nope} is not a parameter of kind io: use one of test, "),
    ("a lone brace in a figure's title", 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
     + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "rates {"\nx = "ranks"\ny = "rate"\n',
     "figure[1].title: has a brace with no partner: a {name} takes a parameter's value; "
     "write {{ and }} for a brace itself"),
    # tester 22, item 4: '{size:d}' passed the check and printed raw
    ("a placeholder with a format", 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
     + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "{size:d} and {block!r}"\nx = "ranks"\ny = "rate"\n',
     "figure[1].title: {size:d}: a placeholder is a parameter's name alone, e.g. {size}"),
    # tester 20: a test's values the sweep lacks never ran, without a word
    ("a test's ranks outside the sweep", 'name = "x"\n[sweep]\nranks = [1, 2]\nblocks = ["64k"]\nsize = "1m"\n'
     '[[test]]\nid = "a"\nlayout = "partitioned"\nphases = ["write"]\nranks = [2, 4]\n',
     "test[1].ranks: 4 is not among sweep.ranks (1, 2): a test's ranks choose among the sweep's; "
     "add it to sweep.ranks or drop it from the test"),
    ("a test's blocks outside the sweep", 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
     '[[test]]\nid = "a"\nlayout = "partitioned"\nphases = ["write"]\nblocks = ["1m"]\n',
     "test[1].blocks: 1m is not among sweep.blocks (64k)"),
    ("a test's loaders without the sweep's", 'name = "x"\n[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n'
     '[[test]]\nid = "a"\nlayout = "partitioned"\nphases = ["write"]\nbackground = [2]\n',
     "test[1].background: 2 is not among sweep.background (0, the default: no loaders)"),
    # tester 19: S and s ran every point twice, 'best of 6'
    ("a class twice", 'name = "x"\nkind = "bt"\n[sweep]\nranks = [1]\nclasses = ["S", "s"]\n'
                      '[[test]]\nid = "p"\nio = "posix"\n', "sweep.classes: names class S twice"),
    # tester 19: ran at one rank without a word, where --ranks is refused
    ("bonnie on two ranks", 'name = "x"\nkind = "bonnie"\n[sweep]\nranks = [1]\n'
                            '[[test]]\nid = "b"\nranks = [2]\nsize = "4m"\n',
     "test[1].ranks: bonnie runs one process on one node"),
    ("a btio class twice", 'name = "x"\nkind = "btio"\n[sweep]\nranks = [1]\n'
                           '[[test]]\nid = "b"\nsubtype = "full"\nclasses = ["W", "w"]\n',
     "test[1].classes: names class W twice"),
    ("missing key", '[sweep]\nranks = [1]\nblocks = ["64k"]\nsize = "1m"\n' + GOOD_TEST, "name: missing"),
    ("missing sweep key", 'name = "x"\n[sweep]\nranks = [1]\nsize = "1m"\n' + GOOD_TEST, "sweep.blocks: missing"),
    ("wrong type", GOOD_HEAD.replace("ranks = [1]", 'ranks = "four"') + GOOD_TEST, "sweep.ranks:"),
    ("wrong item type", GOOD_HEAD.replace("ranks = [1]", "ranks = [1, 0]") + GOOD_TEST, "sweep.ranks: entry 2"),
    ("bad size", GOOD_HEAD.replace('size = "1m"', 'size = "lots"') + GOOD_TEST, "sweep.size:"),
    ("unknown layout", GOOD_HEAD + GOOD_TEST.replace("partitioned", "spiral"), "test[1].layout: 'spiral' is unknown"),
    ("unknown phase", GOOD_HEAD + GOOD_TEST.replace('["write"]', '["scribble"]'), "test[1].phases"),
    ("unknown key", GOOD_HEAD + GOOD_TEST + "gruop = 2\n", "test[1].gruop: unknown key"),
    ("unknown kind", 'kind = "teleport"\n' + GOOD_HEAD + GOOD_TEST, "kind: 'teleport' is unknown"),
    ("duplicate test", GOOD_HEAD + GOOD_TEST + GOOD_TEST, "test[2].id"),
    ("no tests", GOOD_HEAD, "test: missing"),
    ("figure axis", GOOD_HEAD + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "t"\nx = "colour"\ny = "rate"\n',
     "figure[1].x: 'colour' is not a parameter"),
    ("figure unit", GOOD_HEAD + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "t"\nx = "ranks"\ny = "rate"\nunit = "furlongs"\n',
     "figure[1].unit"),
    ("broadcast write", GOOD_HEAD + GOOD_TEST.replace("partitioned", "broadcast"), "test[1].phases"),
    ("bt class", 'name = "b"\nkind = "bt"\n[sweep]\nranks = [1]\nclasses = ["Q"]\n[[test]]\nid = "p"\nio = "posix"\n',
     "sweep.classes: 'Q' is not a BT class"),
    ("not toml", "name = \n", "not valid TOML"),
    # tester 13: what names files and lists is checked as it is read
    ("test id a path", GOOD_HEAD + GOOD_TEST.replace('id = "t"', 'id = "../../x"'), "test[1].id: '../../x' cannot "
     "name files and --tests"),
    ("test id with a comma", GOOD_HEAD + GOOD_TEST.replace('id = "t"', 'id = "a,b"'), "test[1].id:"),
    ("test id with a space", GOOD_HEAD + GOOD_TEST.replace('id = "t"', 'id = "a b"'), "test[1].id:"),
    ("figure id a path", GOOD_HEAD + GOOD_TEST + '[[figure]]\nid = "a/b"\ntitle = "t"\nx = "ranks"\ny = "rate"\n',
     "figure[1].id:"),
    ("duplicate figure", GOOD_HEAD + GOOD_TEST + 2 * '[[figure]]\nid = "f"\ntitle = "t"\nx = "ranks"\ny = "rate"\n',
     "figure[2].id: 'f' is used twice"),
    ("empty where", GOOD_HEAD + GOOD_TEST + '[[figure]]\nid = "f"\ntitle = "t"\nx = "ranks"\ny = "rate"\n'
     'where = { phase = [] }\n', "figure[1].where.phase: an empty list selects no point"),
    # a value the plan refuses is told as the file wrote it, not as an option never given
    ("ranks repeated", GOOD_HEAD.replace("ranks = [1]", "ranks = [2, 2]") + GOOD_TEST,
     "sweep.ranks 2,2 repeats 2"),
    ("blocks repeated", GOOD_HEAD.replace('blocks = ["64k"]', 'blocks = ["4k", "4096"]') + GOOD_TEST,
     "sweep.blocks 4k,4096 repeats 4k"),
    ("ranks beyond", GOOD_HEAD.replace("ranks = [1]", "ranks = [100000000000]") + GOOD_TEST,
     "sweep.ranks must be at most"),
    ("empty name", GOOD_HEAD.replace('name = "x"', 'name = ""') + GOOD_TEST, "name: '' is not a line of printable"),
    ("two-line name", GOOD_HEAD.replace('name = "x"', 'name = "a\\nb"') + GOOD_TEST, "name: 'a\\nb' is not a line"),
]


@pytest.mark.parametrize("label,text,phrase", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_a_bad_experiment_file_gets_one_line_naming_file_and_key(tmp_path, label, text, phrase):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    db = tmp_path / "r.sqlite"
    r = pario("run", f, "--dir", tmp_path, db=db)
    assert_refused_in_one_line(r, f, phrase)
    assert not db.exists()


def test_a_directory_or_non_utf8_file_is_refused(tmp_path):
    d = tmp_path / "dir.toml"
    d.mkdir()
    r = pario("run", d, "--dir", tmp_path, db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "is a directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    f = tmp_path / "latin1.toml"
    f.write_bytes(("# caf\xe9\n" + GOOD_HEAD + GOOD_TEST).encode("latin-1"))
    r = pario("run", f, "--dir", tmp_path, db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "not UTF-8" in r.stderr and str(f) in r.stderr
    r = pario("run", tmp_path / "absent.toml", "--dir", tmp_path, db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and "does not exist" in r.stderr
    assert not (tmp_path / "r.sqlite").exists()


def test_shipped_presets_pass_their_own_schema():
    from pario.presets import load_experiment, preset_names

    for name in preset_names():
        exp = load_experiment(name)
        assert exp.origin == name and exp.text.startswith("#")


def test_a_figure_left_out_for_a_value_no_point_has_shows_no_empty_list():
    """Tester 22 (fix 21): 'no point has calls collective (this run: )'."""
    from pario.figures import why_left_out

    io = kinds()["io"]
    f = Figure(id="f3", title="t", x="ranks", y="rate", where={"collective": True})
    why = why_left_out(f, [Record({"ranks": 1, "collective": None}, {"rate": [1.0]})], io.params)
    assert why.startswith("no point has calls collective (no point of this run has one): "), why
