"""Free space, checked before a run starts: a plan that cannot fit is
refused once, in one line, with nothing stored; stripe targets on one file
system share its free space (summed per device, in the front end's plan
check and in the engine's own)."""

import os
import subprocess

from test_front_end import pario

STRIPED = """\
name = "striped-space"
title = "two stripe targets on one file system"
[sweep]
ranks = [1]
blocks = ["64k"]
size = "2m"
iterations = 1
[[test]]
id = "striped"
title = "Striped"
layout = "partitioned"
phases = ["write", "read"]
stripe_targets = 2
stripe_unit = "64k"
"""


def test_a_plan_that_cannot_fit_is_refused_before_the_first_point(small_tmpfs, tmp_path):
    full = small_tmpfs("400k")
    db = tmp_path / "r.sqlite"
    r = pario("run", "ascired-api", "--quick", "--dir", full, db=db, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].endswith(f"free space on {full} or lower --size"), lines[0]
    assert "has 400 KiB free but" in lines[0] and "points do not fit" in lines[0], lines[0]
    assert "run 1" not in r.stdout and "[1/" not in r.stderr  # no point started
    assert not db.exists() and os.listdir(full) == []       # nothing stored, nothing made
    dry = pario("run", "ascired-api", "--quick", "--dir", full, "--dry-run", db=db)
    assert dry.returncode == 0 and "plan: warning: " in dry.stdout and not db.exists()


def test_stripe_targets_on_one_file_system_share_its_free_space(small_tmpfs, tmp_path, launcher,
                                                                  engine):
    disk = small_tmpfs("3m")
    toml = tmp_path / "striped.toml"
    toml.write_text(STRIPED)
    db = tmp_path / "r.sqlite"
    # 2 MiB over two targets on a 3 MiB file system: fits, runs
    r = pario("run", toml, "--dir", disk, db=db)
    assert r.returncode == 0, r.stderr
    assert "points: 1 ok" in r.stdout and os.listdir(disk) == []
    # 4 MiB: each target's 2 MiB fits alone, both together do not
    r = pario("run", toml, "--dir", disk, "--size", "4m", db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "needs 4 MiB over 2 stripe targets on one file system" in lines[0], lines[0]
    assert lines[0].endswith(f"free space on {disk} or lower --size")
    # the engine's own check sums them the same way, before any byte is written
    targets = [disk / "s0", disk / "s1"]
    for t in targets:
        t.mkdir()
    p = subprocess.run(launcher.command(1, [engine, "io", "--stripe-dirs", ",".join(map(str, targets)),
                                            "--stripe-unit", "64k", "--block", "64k", "--size", "4m",
                                            "--phases", "write"]),
                       capture_output=True, text=True, env=launcher.environment(), timeout=60)
    lines = [l for l in p.stderr.splitlines() if l.startswith("pario-engine: error:")]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "(one file system for 2 targets) has 3.0 MiB free but the run needs 4 MiB" in lines[0], lines[0]
    assert all(os.listdir(t) == [] for t in targets)


def test_write_loaders_of_a_striped_run_count_against_its_first_target(small_tmpfs, tmp_path,
                                                                       launcher, engine):
    """The loaders stream their 64 MiB files into the striped run's first
    directory: a plan (and the engine) that left them out ran on a full
    disk, the loaders died, and the run still printed its load."""
    disk = small_tmpfs("8m")
    toml = tmp_path / "striped-load.toml"
    toml.write_text(STRIPED.replace("iterations = 1", "iterations = 1\nbackground = [1]")
                    .replace('stripe_unit = "64k"', 'stripe_unit = "64k"\nbackground_kind = "write"'))
    db = tmp_path / "r.sqlite"
    r = pario("run", toml, "--dir", disk, db=db)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "needs 66 MiB (with the write loaders' files) over 2 stripe targets on one file system" in lines[0], lines[0]
    # the loaders' 64 MiB alone overflow the 8 MiB: no --size can help (tester 22, item 2)
    assert lines[0].endswith(" or fewer background loaders (the background key of an "
                             "experiment file of your own, docs/presets.md)"), lines[0]
    assert "--size" not in lines[0], lines[0]   # no --size lowers the loaders' files
    assert not db.exists() and os.listdir(disk) == []
    targets = [disk / "s0", disk / "s1"]
    for t in targets:
        t.mkdir()
    p = subprocess.run(launcher.command(1, [engine, "io", "--stripe-dirs", ",".join(map(str, targets)),
                                            "--stripe-unit", "64k", "--block", "64k", "--size", "2m",
                                            "--background", "1", "--background-kind", "write"]),
                       capture_output=True, text=True, env=launcher.environment(), timeout=60)
    lines = [l for l in p.stderr.splitlines() if l.startswith("pario-engine: error:")]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "needs 66 MiB (with the write loaders' files): free space or lower --size or --background" \
        in lines[0], lines[0]
    assert all(os.listdir(t) == [] for t in targets)
