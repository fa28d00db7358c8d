"""beff: b_eff_io's five patterns, chunk list, time-driven first write,
rewrite and read over the same bytes (checked), and the single number."""

import json
import subprocess

import pytest


def run_kernel(launcher, engine, ranks, *args, timeout=300):
    argv = launcher.command(ranks, [engine, *map(str, args)])
    return subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=timeout)


def pario_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("pario-engine: error:")]


def test_beff_runs_every_pattern_and_chunk_and_computes_the_published_number(launcher, engine, shm_dir,
                                                                             tmp_path):
    out = tmp_path / "b.json"
    p = run_kernel(launcher, engine, 2, "beff", "--dir", shm_dir, "-T", 6, "--max-chunk", "64k", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "b_eff_io = " in p.stdout
    doc = json.loads(out.read_text())
    # 1 KiB, 32 KiB, each +8 (the non-wellformed ones), then MPART; 1 MiB is above MPART here
    assert doc["params"]["chunk_bytes"] == [1024, 1032, 32768, 32776, 65536]
    methods = {m["name"]: m for m in doc["methods"]}
    assert list(methods) == ["write", "rewrite", "read"]
    for m in methods.values():
        pats = {x["type"]: x for x in m["patterns"]}
        assert [x["name"] for x in m["patterns"]] == ["scatter", "shared", "separate", "segmented", "seg-coll"]
        for x in pats.values():
            assert x["mib_per_s"] > 0
            calls = [c["calls_per_rank"] for c in x["chunks"]]
            assert all(c >= 1 for c in calls)
            assert x["bytes"] == sum(2 * c["calls_per_rank"] * c["chunk_bytes"] for c in x["chunks"])
            assert x["mib_per_s"] == pytest.approx(x["bytes"] / 2**20 / x["seconds"])
        rates = [pats[t]["mib_per_s"] for t in range(5)]
        assert m["mib_per_s"] == pytest.approx((2 * rates[0] + sum(rates[1:])) / 6)  # scatter counts double
    # rewrite and read repeat the first write's calls exactly
    for t in range(5):
        counts = [[c["calls_per_rank"] for c in m["patterns"][t]["chunks"]] for m in methods.values()]
        assert counts[0] == counts[1] == counts[2]
    assert doc["b_eff_io_mib_per_s"] == pytest.approx(sum(m["mib_per_s"] for m in methods.values()) / 3)
    assert list(shm_dir.iterdir()) == []


def test_beff_no_shared_leaves_out_pattern_1(launcher, engine, shm_dir, tmp_path):
    out = tmp_path / "b.json"
    p = run_kernel(launcher, engine, 3, "beff", "--dir", shm_dir, "-T", 4, "--max-chunk", "32k", "--no-shared",
                   "--json", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert [x["type"] for x in doc["methods"][0]["patterns"]] == [0, 2, 3, 4]
    assert list(shm_dir.iterdir()) == []


@pytest.mark.parametrize("args,phrase", [
    (["--max-chunk", "0"], "--max-chunk '0' must be greater than zero"),
    (["-T", "0"], "-T '0' must be a number of seconds above 0"),
    (["-T", "0.0005", "--max-chunk", "64k"], "is too short for one call of each pattern"),
    (["--mem-per-pe", "1k"], "under 1 KiB"),
    (["--dir", "/nonexistent/x"], "is not an existing directory"),
])
def test_beff_refuses_bad_input_with_one_line_and_leaves_nothing(launcher, engine, shm_dir, tmp_path, args,
                                                                 phrase):
    out = tmp_path / "b.json"
    argv = ["beff", *(["--dir", str(shm_dir)] if "--dir" not in args else []), *args, "--json", out]
    p = run_kernel(launcher, engine, 2, *argv)
    lines = pario_lines(p.stderr)
    assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert not out.exists() and list(shm_dir.iterdir()) == []
