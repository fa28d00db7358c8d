"""BT verifies against NPB's reference residual and error norms (1e-8)."""

import json
import subprocess

import pytest


@pytest.mark.parametrize("cls", ["S", "W"])
def test_bt_class_verifies_against_npb_reference(engine, tmp_path, cls):
    out = tmp_path / "bt.json"
    p = subprocess.run([engine, "bt", "--class", cls, "--json", str(out)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "verification SUCCESSFUL" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["command"] == "bt" and doc["status"] == "ok"
    v = doc["verification"]
    assert v["performed"] and v["ok"] and v["largest_relative_difference"] < 1e-8
    assert doc["params"]["grid"] == {"S": 12, "W": 24}[cls]
    assert doc["mops"] > 0 and doc["compute_seconds"] > 0


def test_bt_other_step_count_is_not_called_verified(engine):
    p = subprocess.run([engine, "bt", "--class", "S", "--steps", "59"], capture_output=True, text=True)
    assert p.returncode == 0 and "verification not performed" in p.stdout
    assert "SUCCESSFUL" not in p.stdout


def test_bt_under_mpirun_on_one_rank(run_io, launcher, engine, tmp_path):
    argv = launcher.command(1, [engine, "bt", "--class", "S"])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
    assert p.returncode == 0 and "SUCCESSFUL" in p.stdout


@pytest.mark.parametrize("args,phrase", [
    ([], "--class is required"),
    (["--class", "Q"], "--class 'Q' is unknown"),
    (["--class", "S", "--steps", "0"], "--steps '0'"),
    (["--class", "S", "--warp"], "unknown option '--warp'"),
])
def test_bt_refuses_with_one_line(engine, args, phrase):
    p = subprocess.run([engine, "bt", *args], capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0]


def test_bt_refuses_more_ranks_until_the_decomposition_exists(launcher, engine):
    argv = launcher.command(2, [engine, "bt", "--class", "S"])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
    assert p.returncode != 0 and "bt runs on one rank for now" in p.stderr
