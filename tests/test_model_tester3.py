"""Tester report 3's model items: what a bigger I/O-node cache serves a
read (item 2), the docs' CFS figures being those `pario model cfs` prints
and a plan that loses a value the user asked for (item 8), and the machine
file's round trip and --set's values (items 13a-c).  Small points only:
the model at 16 ranks and 32 MiB takes well under a second."""

import os
import sqlite3
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest

from conftest import ROOT
from pario.errors import UsageError
from pario.model import load_machine
from pario.model.command import predict_preset

SERVED = "blocks asked ({}) served by the I/O-node cache left by the write phase"


def pario(*args, db):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PARIO_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "pario", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def _read(sets, ranks=16, size="32m"):
    (_, doc), = predict_preset("cfs", load_machine("ipsc860", sets), tests=["partitioned"],
                               ranks=[str(ranks)], blocks=["1m"], size=size)
    return next(p for p in doc["phases"] if p["name"] == "read")


def test_a_read_served_by_the_cache_the_write_left_says_so():
    """Item 2: 10 I/O nodes x 5 MB hold the whole 32 MiB file the write
    phase wrote, so the read comes from their memory, faster than all ten
    disks (8.2 MiB/s); the bound says where it came from, not 'disks'.
    With the report's 1 MB caches almost nothing is left to serve it."""
    big = _read(("io_node.cache=5000k",))
    text = big["explanation"]["text"]
    assert big["summary"]["best_mib_per_s"] > 10 * 0.82
    assert "left by the write phase" in text and "not by the disks" in text, text
    assert big["explanation"]["served_by_earlier_phase_fraction"] > 0.9
    small = _read(())
    assert small["explanation"].get("served_by_earlier_phase_fraction", 0) < 0.2
    assert small["summary"]["best_mib_per_s"] < 10 * 0.82


def test_a_value_the_user_asked_for_that_no_point_keeps_is_a_warning(tmp_path, capsys):
    """Item 8: the README's 1024 ranks of 1 MiB in a file too small for
    them lost the point with one 'skipping' line among others; a --ranks
    value with no point left says so as a warning with the size that
    fits, for 'pario model' and 'pario run' alike."""
    from pario.cli import main

    db = str(tmp_path / "r.sqlite")
    assert main(["model", "cfs", "--machine", "ipsc860", "--tests", "partitioned", "--ranks", "1,1024",
                 "--blocks", "1m", "--size", "4m", "--db", db]) == 0
    out = capsys.readouterr().out
    want = ("plan: warning: --ranks asked for 1024 but none of its points can run (block is larger "
            "than a rank's share): --size 1 GiB or more gives each of 1024 ranks a 1 MiB block")
    assert want in out, out
    d = Path("/dev/shm") / f"h-m12items-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    try:
        run = ["run", "cfs", "--dir", str(d), "--tests", "partitioned", "--ranks", "1,4", "--size", "2m",
               "--dry-run", "--db", db]
        assert main([*run, "--blocks", "64k,1m"]) == 0
        out = capsys.readouterr().out
        assert "plan: skipping partitioned ranks=4 block=1 MiB: block is larger than a rank's share" in out
        # 4 ranks keep their 64 KiB point, and 1 MiB its 1-rank one: nothing asked for is gone
        assert "warning: --ranks" not in out and "warning: --blocks" not in out, out
        assert main([*run, "--blocks", "1m"]) == 0
        out = capsys.readouterr().out
        assert ("plan: warning: --ranks asked for 4 but none of its points can run (block is larger than "
                "a rank's share): --size 4 MiB or more") in out, out
    finally:
        d.rmdir()


def test_the_model_examples_run_every_point_they_name():
    """README's examples and the commands docs/model.md's CFS table comes
    from: each plans every point it names (nothing skipped)."""
    readme = (ROOT / "README.md").read_text().split("## Predicting: `pario model`")[1].split("```")[1]
    docs = (ROOT / "docs" / "model.md").read_text().split("So the table's rows are what these "
                                                         "commands print:")[1].split("```")[1]
    from pario.cli import build_parser
    from pario.model.command import model_points
    from pario.presets import load_experiment

    lines = [l for l in (readme + docs).splitlines() if l.strip()]
    assert len(lines) == 8
    for line in lines:
        args = build_parser().parse_args(line.split("#")[0].split()[1:])
        options = {k: v for k, v in vars(args).items() if k != "func"}
        points, skipped = model_points(load_experiment(args.experiment), options)
        assert points and not skipped, (line, [(p.label(), why) for p, why in skipped])


def test_print_machine_round_trips_keep_the_name_and_the_source(tmp_path):
    """Item 13a: no ' (from FILE)' piling up; the shipped machines' source
    is their report, not 'pario probe'.  (Tester 8, item 17: a machine
    printed with --set names the override in its name, nothing else.)"""
    db = tmp_path / "r.sqlite"
    r = pario("model", "--machine", "asci-red", "--print-machine", db=db)
    assert r.returncode == 0, r.stderr
    first = tomllib.loads(r.stdout)
    assert first["name"] == "asci-red"
    assert first["source"] == "The I/O model on the ASCI Red platform (Sandia/Intel, 1998)"
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(r.stdout)
    r = pario("model", "--machine", a, "--print-machine", "--set", "agent.count=4", db=db)
    assert r.returncode == 0, r.stderr
    b.write_text(r.stdout)
    second = tomllib.loads(r.stdout)
    assert (second["name"], second["source"]) == (f"{first['name']} with --set agent.count=4", first["source"])
    assert second["agent"]["count"] == {"value": 4, "source": "--set agent.count=4"}  # a count, as files write it
    assert load_machine(str(b)).name == f"asci-red with --set agent.count=4 (from {b})"
    ipsc = tomllib.loads(pario("model", "--machine", "ipsc860", "--print-machine", db=db).stdout)
    assert ipsc["source"].startswith("Nitzberg, Performance of the iPSC/860"), ipsc["source"]


def test_io_node_cache_zero_is_no_cache_and_a_too_small_one_says_so():
    """Item 13b: 0 is documented and modelled as no cache (every request
    to a disk); 5 bytes is refused with a line that names 0 too."""
    with pytest.raises(UsageError) as err:
        load_machine("ipsc860", ["io_node.cache=5"])
    assert str(err.value) == ("--set: io_node.cache must hold at least one io_node.cache_block "
                              "(4 KiB), or be 0 for no cache")
    (_, doc), = predict_preset("cfs", load_machine("ipsc860", ["io_node.cache=0"]), tests=["partitioned"],
                               ranks=["2"], blocks=["64k"], size="1m")
    for ph in doc["phases"]:
        counters = ph["iterations"][0]["model"]["counters"]
        assert "cache" not in counters          # no cache, so no hits or prefetch
        # every 4 KiB piece is its own disk transfer: 1 MiB / 4 KiB
        assert counters["disk_transfers"] == 256


def test_set_takes_one_value_not_a_list(tmp_path):
    """Item 13c: a list is not 'a bad size'."""
    r = pario("model", "cfs", "--machine", "ipsc860", "--set", "io_node.cache=1m,5m", db=tmp_path / "r.sqlite")
    assert r.returncode == 2
    assert r.stderr.strip() == ("pario: error: --set io_node.cache=1m,5m: --set takes one value, not a list; "
                                "run 'pario model' once per value (--set io_node.cache=1m, ...)"), r.stderr
    assert not (tmp_path / "r.sqlite").exists() or sqlite3.connect(tmp_path / "r.sqlite").execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 0
