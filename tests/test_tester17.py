"""Tester 17's items on `pario model`, through the real command line: a
--set of a one-stream rate on a machine whose points of several ranks use
rates of their own says so (item 1); a machine printed from a printed
machine names each --set once, with its latest value (item 8)."""

import os
import subprocess
import sys

from conftest import ROOT


def pario(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def printed(tmp_path, name, *sets, machine="ipsc860"):
    r = pario("model", "--machine", machine, "--print-machine", *[a for s in sets for a in ("--set", s)],
              db=tmp_path / "unused.sqlite")
    assert r.returncode == 0, r.stderr
    path = tmp_path / name
    path.write_text(r.stdout)
    return path


def test_a_set_one_stream_rate_says_which_points_it_leaves(tmp_path):
    two = printed(tmp_path, "two.toml", "disk.shared_write_rate=20MB/s")
    db = tmp_path / "r.sqlite"
    plan = ["model", "cfs", "--quick", "--machine", two, "--tests", "partitioned", "--blocks", "1m"]
    r = pario(*plan, "--ranks", "1,2", "--set", "disk.write_rate=1MB/s", db=db)
    assert r.returncode == 0, r.stderr
    warning = ("plan: warning: --set disk.write_rate=1MB/s acts on points of one rank: those of two or more use "
               "disk.shared_write_rate (20MB/s), left as they are; --set them too, or to 0 to follow "
               "disk.write_rate")
    assert warning in r.stdout.splitlines(), r.stdout
    # stored with the points: show says it again
    assert warning.removeprefix("plan: warning: ") in pario("show", db=db).stdout
    # and none where it has nothing to say: one-rank points only, or both rates set
    for extra in (["--ranks", "1", "--set", "disk.write_rate=1MB/s"],
                  ["--ranks", "1,2", "--set", "disk.write_rate=1MB/s", "--set", "disk.shared_write_rate=0"]):
        r = pario(*plan, *extra, db=db)
        assert r.returncode == 0 and "acts on points of one rank" not in r.stdout, (extra, r.stdout, r.stderr)


def test_a_machine_printed_again_names_each_set_once(tmp_path):
    first = printed(tmp_path, "first.toml", "disk.rate=2MB/s")
    again = printed(tmp_path, "again.toml", "disk.rate=3MB/s", machine=first)
    text = again.read_text()
    assert 'name = "ipsc860 with --set disk.rate=3MB/s"' in text, text
    assert text.count("with --set") == 1 and "2MB/s" not in text
    assert ", with disk.rate=3MB/s set by hand (--set)\"" in text
    both = printed(tmp_path, "both.toml", "io_node.cache=5MB", machine=first)
    assert 'name = "ipsc860 with --set io_node.cache=5MB, disk.rate=2MB/s"' in both.read_text()


def test_the_documented_parameter_table_is_the_models():
    """Item 8: docs/model.md says `--parameters` prints its table, and the
    table lacked three parameters and had older words for two."""
    from pario.model.params import parameter_table_rows

    text = (ROOT / "docs" / "model.md").read_text()
    lines = text.splitlines()
    start = lines.index("| parameter | unit | meaning |") + 2
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    assert lines[start:end] == parameter_table_rows()


def test_a_machine_file_s_best_of_is_a_whole_number_of_trials(tmp_path):
    text = (ROOT / "src" / "pario" / "model" / "machines" / "ipsc860.toml").read_text()
    for bad in ('"3"', "-1", "1001", "true", "2.5"):
        path = tmp_path / "m.toml"
        path.write_text(f"best_of = {bad}\n{text}")
        r = pario("model", "cfs", "--quick", "--machine", path, db=tmp_path / "r.sqlite")
        assert r.returncode == 2 and r.stderr == (
            f"pario: error: machine {path}: best_of must be a whole number of trials from 0 to 1000 (0: one "
            "deterministic trial), as --print-machine writes it\n"), (bad, r.stderr)
        assert not (tmp_path / "r.sqlite").exists()


def test_a_timeline_of_thousands_of_ranks_draws_the_ones_that_tell():
    """Item 7: a 4096-rank predicted run's report drew a bar per rank: a
    5 MB SVG, 40 s.  Beyond 64 ranks the timeline draws the 8 last and 8
    first to stop and ranks spread between, and says so."""
    from pario.report.timeline import timeline_figure, timeline_svg

    ranks = [{"rank": r, "start_seconds": 0.0, "open_seconds": 0.001, "io_seconds": 0.01 + (r % 97) * 1e-4,
              "fsync_seconds": 0.002, "close_seconds": 0.001, "total_seconds": 0.03} for r in range(4096)]
    ranks[3001]["io_seconds"] = ranks[3001]["total_seconds"] = 0.5  # the straggler
    it = {"ranks": ranks}
    fig = timeline_figure(it, "t")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 64 and "rank 3001" in labels and "rank 0" in labels
    assert [int(x.split()[1]) for x in labels] == sorted(int(x.split()[1]) for x in labels)
    assert "64 of 4096 ranks: the 8 last and 8 first to stop, the rest evenly spread" in fig.axes[0].get_title()
    assert len(timeline_svg(it, "t")) < 400_000
    few = timeline_figure({"ranks": ranks[:64]}, "t")
    assert len(few.axes[0].get_yticklabels()) == 64 and few.axes[0].get_title() == "t"


def test_a_reader_that_leaves_after_the_first_lines_does_not_cost_the_plots(tmp_path):
    """Item 5: `pario model ... | head -3` stored the run, complete, exited
    141 without a word and wrote none of its plots: the first print after
    head left ended the command."""
    import pytest

    from pario.runner import output_of_stored_run, show_stored_run
    from pario.store import Store

    db = tmp_path / "r.sqlite"
    r = pario("model", "cfs", "--quick", "--machine", "ipsc860", "--tests", "partitioned", "--ranks", "1,2",
              "--blocks", "1m", "--out", tmp_path / "first", db=db)
    assert r.returncode == 0, r.stderr

    class HeadLeaves:
        """Takes 3 lines, then its reader is gone."""
        lines = 0

        def write(self, text):
            if self.lines >= 3:
                raise BrokenPipeError(32, "Broken pipe")
            self.lines += text.count("\n")
            return len(text)

        def flush(self):
            pass

    plots = tmp_path / "plots"
    store = Store(db)
    with pytest.raises(BrokenPipeError):  # the CLI's silent exit 141
        with output_of_stored_run(1, 4, HeadLeaves()) as shown:
            assert show_stored_run(store, 1, shown, plots)
    assert sorted(p.name for p in plots.iterdir()) == sorted(p.name for p in (tmp_path / "first").iterdir())


def test_bad_values_say_what_is_wrong_with_them(tmp_path):
    """Item 8: a negative rate was told only an example, a TOML boolean
    was echoed as Python's 'True', and a stripe count past the disks gave
    neither the numbers nor the fix."""
    db = tmp_path / "r.sqlite"
    cases = [
        (["--set", "disk.rate=-1.148MB/s"], "disk.rate = '-1.148MB/s' is not a valid rate (no rate is negative): "
                                            "use 2.8MB/s"),
        (["--set", "io_node.count=-2"], "io_node.count = '-2' is not a valid count (no count is negative)"),
        (["--set", "stripe.count=11"], "--set: stripe.count (11) must be between 1 and io_node.count x "
                                       "io_node.disks (10 x 1 = 10): --set stripe.count=10, or more I/O nodes "
                                       "or disks"),
    ]
    boolean = tmp_path / "b.toml"
    boolean.write_text((ROOT / "src" / "pario" / "model" / "machines" / "ipsc860.toml").read_text().replace(
        'value = "1.148MB/s"', "value = true", 1))
    cases.append((["--machine", boolean], f"machine {boolean}: "))
    for args, said in cases:
        machine = [] if "--machine" in args else ["--machine", "ipsc860"]
        r = pario("model", "cfs", "--quick", *machine, *args, db=db)
        assert r.returncode == 2 and r.stderr.startswith(f"pario: error: {said}"), (args, r.stderr)
        assert "'True'" not in r.stderr and len(r.stderr.splitlines()) == 1
    assert "= 'true' is not a valid rate (a TOML true or false is no quantity)" in r.stderr
    assert not db.exists()


def test_two_predictions_differ_in_their_machine_not_an_mpi_library(tmp_path):
    """Item 8: compare said 'the runs differ in MPI library: run 2 model of
    ipsc860; run 1 model of asci-red', and so of a prediction from a probe
    and one from that probe's printed file."""
    db = tmp_path / "r.sqlite"
    plan = ["model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "2", "--blocks", "1m"]
    kept = printed(tmp_path, "kept.toml")
    for machine in ("asci-red", "ipsc860", kept):
        assert pario(*plan, "--machine", machine, db=db).returncode == 0
    other = " ".join(pario("compare", "1", "2", db=db).stdout.split())
    assert "warning: the runs differ in modelled machine: run 1 asci-red; run 2 ipsc860" in other, other
    assert "MPI library" not in other
    same = " ".join(pario("compare", "2", "3", db=db).stdout.split())
    assert "differ in" not in same, same


def test_a_predicted_run_s_report_calls_its_rates_predicted(tmp_path):
    """Item 8: the report said a predicted run's rates were the 'best of
    the trials as the CFS report reports them'."""
    db = tmp_path / "r.sqlite"
    assert pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "2", "--blocks", "1m",
                 "--machine", "ipsc860", db=db).returncode == 0
    out = tmp_path / "r.html"
    assert pario("report", "1", "--out", out, db=db).returncode == 0
    html = out.read_text()
    assert "Rates of run 1 are MiB/s (2^20 bytes per second), predicted by the model." in html
    assert "best of the trials" not in html


def test_a_set_that_changes_nothing_is_refused(tmp_path):
    """Item 2: a token's cost on a plan with no group acting, interleaved
    readers' rates on a plan of none, and a machine's own value were each
    stored as a what-if that predicted exactly the machine without it."""
    db = tmp_path / "r.sqlite"
    plan = ["model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "2", "--blocks", "1m"]
    cases = [
        ("ipsc860", "network.token_latency=1ms", "does not act on cfs: it is the token's hand-over between "
                                                  "grouped ranks"),
        ("ipsc860", "disk.interleaved_read_rate=1MB/s", "does not act on cfs: it is the rate of two or more "
                                                        "ranks reading one file in interleaved blocks"),
        ("ipsc860", "disk.rate=1.148MB/s", "is machine ipsc860's own value (1.148MB/s): it changes nothing"),
        ("ipsc860", "io_node.cache=1e3k", "is machine ipsc860's own value (1000k)"),
        ("asci-red", "agent.mode=munix", "is machine asci-red's own value (munix)"),
    ]
    for machine, item, said in cases:
        r = pario(*plan, "--machine", machine, "--set", item, db=db)
        assert r.returncode == 2 and r.stderr.startswith(f"pario: error: --set {item} {said}"), (item, r.stderr)
        assert len(r.stderr.splitlines()) == 1
        if "own value" in said:  # printed too (tester 23, item 1: a machine file named for a no-op)
            r = pario("model", "--machine", machine, "--set", item, "--print-machine", db=db)
            assert r.returncode == 2 and r.stdout == "" and f"--set {item} {said}" in r.stderr, r.stderr
    assert not db.exists()
    # where they act, they are taken
    for extra in (["--tests", "interleaved", "--set", "disk.interleaved_read_rate=1MB/s"],):
        r = pario("model", "cfs", "--quick", "--ranks", "2", "--blocks", "1m", "--machine", "ipsc860", *extra, db=db)
        assert r.returncode == 0, r.stderr


def test_list_names_a_negated_option():
    """Tester 18: `pario list` left out --no-prealloc (io's --prealloc is a
    --flag/--no-flag of its own kind)."""
    from pario.studies import options_text

    assert options_text({"prealloc": False, "ranks": ["1"]}) == "--ranks 1 --no-prealloc"
    assert options_text({"prealloc": True}) == "--prealloc"
    assert options_text({"prealloc": None}) == ""
    # tester 23, item 3: the MPI library and how ranks started shape what a run measured
    assert options_text({"mpi": "mpich", "timeout": 9.0, "out": "figs"}) == "--mpi mpich"
    assert options_text({"mpi": "auto", "launcher_template": "mpirun -n {ranks} {engine} {engine_args}"}) == \
        "--launcher-template 'mpirun -n {ranks} {engine} {engine_args}'"


def test_an_empty_database_s_hint_runs_into_it(tmp_path):
    """Tester 18: the hint 'pario run cfs --quick' lacked --dir, and would
    have stored into another database than the one named."""
    from pario.store import Store

    db = tmp_path / "empty.sqlite"
    Store(db).close()
    for args in (["show"], ["export", "--csv"], ["plot"]):
        r = subprocess.run([sys.executable, "-m", "pario", *args, "--db", str(db)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=60)
        assert r.returncode == 2 and r.stderr == (f"pario: error: {db} holds no runs yet: start one with "
                                                  f"'pario run cfs --quick --dir DIR --db {db}'\n"), r.stderr


def test_a_kernel_s_failure_names_what_tells_its_points_apart():
    """Tester 19, item 9: 'failed: btio ranks=1: ...' where classes S and W
    both ran at one rank."""
    import json

    from pario.runner import failure_line

    plan = {"study": "btio", "test": "btio", "title": "BTIO", "ranks": 1, "trial": 2, "class": "W",
            "subtype": "full", "figure": "Figure 6"}
    row = {"test_id": "btio", "layout": None, "ranks": 1, "block_bytes": None, "error": "No space left on device",
           "params_json": json.dumps(plan)}
    assert failure_line(row) == "btio ranks=1 class=W subtype=full: No space left on device"
    perf = {**row, "test_id": "perf", "params_json": json.dumps({"study": "perf", "test": "perf", "title": "p",
                                                                 "ranks": 1, "trial": 1, "size": 2 << 20})}
    assert failure_line(perf) == "perf ranks=1 size=2 MiB: No space left on device"


def test_plot_to_a_reader_that_left_still_draws(tmp_path):
    """Tester 19, item 11: `pario plot 7 --out D | head -3` exited 141 and
    drew nothing: its tables come first, and the first print after head
    left ended the command."""
    db = tmp_path / "r.sqlite"
    assert pario("model", "cfs", "--quick", "--tests", "partitioned", "--ranks", "1,2", "--blocks", "1m",
                 "--machine", "ipsc860", "--out", tmp_path / "first", db=db).returncode == 0
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        r = subprocess.run([sys.executable, "-m", "pario", "plot", "1", "--out", str(tmp_path / "again")],
                           stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)})
    finally:
        os.close(write)
    assert r.returncode == 141 and r.stderr == "", r.stderr
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == sorted(
        p.name for p in (tmp_path / "first").iterdir())


def test_a_value_the_engine_refuses_names_the_file_s_key(tmp_path, shm_dir):
    """Tester 19, item 6: 'the engine refuses test l: --grid ...' of a
    file's grid = 200000, naming an option the user never typed."""
    f = tmp_path / "big.toml"
    f.write_text('name = "big"\nkind = "suite"\n[sweep]\nranks = [1]\n[[test]]\nid = "l"\nstudy = "laplace"\n'
                 "grid = 200000\n")
    r = pario("run", f, "--dir", shm_dir, db=tmp_path / "r.sqlite")
    assert r.returncode == 2 and r.stderr.strip().endswith(f"(test[1].grid in {f})"), r.stderr


def test_run_help_of_an_experiment_lists_its_kind_s_options(tmp_path):
    """Tester 19, item 12: `pario run nht1 --help` listed --blocks, --size,
    --cached..., every one of which nht1 refuses."""
    db = tmp_path / "unused.sqlite"
    nht1 = pario("run", "nht1", "--help", db=db)
    assert nht1.returncode == 0 and nht1.stdout.startswith("usage: pario run nht1 "), nht1.stderr
    assert "--classes" in nht1.stdout and "--blocks" not in nht1.stdout and "--cached" not in nht1.stdout
    cfs = pario("run", "cfs", "-h", db=db).stdout
    assert "--blocks" in cfs and "--classes" not in cfs
    unknown = pario("run", "no-such-preset", "--help", db=db)
    assert unknown.returncode == 0 and unknown.stdout.startswith("usage: pario run [-h]")
    assert not db.exists()


def test_the_nht1_table_s_zeta_and_r_io_are_the_figures():
    """Tester 19, item 4: the table computed zeta and R_IO from its rounded
    times (0.094, R_IO 30315789) where Figure 5 and the export had 0.093
    and 30325084."""
    import re

    from pario.figures import Record
    from pario.studies.bt import KIND

    def record(io, t):
        return Record({"test": "posix" if io != "none" else "none", "class": "S", "N": 12, "steps": 60,
                       "ranks": 2, "io": io, "method": io, "group": 0, "interval": 10},
                      {"t_t": [t], "r_io": [], "zeta": []})
    # zeta 0.0994 from the times, 0.1000 from them rounded to 4 digits (0.01000, 0.01100)
    records = [record("none", 0.0100049), record("posix", 0.0109998), record("posix", 0.0602)]
    KIND.finish(records)
    best = min(records[1:], key=lambda r: r.values["t_t"][0])
    (table,) = KIND.tables({"test": [{"id": "posix", "io": "posix"}]}, records, {})
    row = next(l for l in table.splitlines() if l.strip().startswith("12 "))
    zeta, rate = re.search(r"\s(\d+)\s+(-?\d\.\d{3})\s+\[", row).group(2, 1)
    assert zeta == f"{best.values['zeta'][0]:.3f}" and int(rate) == round(best.values["r_io"][0]), row
