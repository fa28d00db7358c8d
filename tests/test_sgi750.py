"""The SGI 750 suite through the front end: `pario run sgi750 --quick`
gives every figure of the report it covers, each kernel is a kind of the
registry, and a bad suite file is refused in one line."""

import json
import re
import textwrap

from test_front_end import pario


def test_quick_sgi750_run_prints_every_figure_of_the_report_and_draws_them(disk_dir, tmp_path):
    db, plots = tmp_path / "r.sqlite", tmp_path / "plots"
    p = pario("run", "sgi750", "--quick", "--dir", disk_dir, "--out", plots, db=db, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert re.search(r"points: \d+ ok$", out, re.M) and "failed" not in out.split("points:")[1].split("\n")[0]
    for number in ("Figure 1. bonnie, chunk 8 KiB", "Figure 2. bonnie, chunk 64 KiB",
                   "Figure 6. NAS btio (full) on NPB's multi-partition",
                   "Figure 3. perf read after sync", "Figure 4. perf write with sync",
                   "Figure 5. perf write, no sync", "Figure 7. FLASH I/O", "Figure 8. Laplace solver",
                   "b_eff_io and its access methods"):
        assert number in out, number
    # Figure 8 has both curves, Figure 7 both transfers
    fig8 = out.split("Figure 8.")[1].split("\n\n")[0]
    assert "enable" in fig8 and "disable" in fig8
    # ... measured on ROMIO without anything exported, which the records say,
    # and the hint took effect: one aggregator wrote with cb, both ranks without
    e = pario("export", "--json", "1", db=db)
    laplace = [r for r in json.loads(e.stdout) if r["study"] == "laplace"]
    assert laplace and {r["mpiio_impl"] for r in laplace} <= {"romio321", "romio"}
    assert {r["cb"]: r["writers"] for r in laplace if r["ranks"] == 2} == {"enable": 1, "disable": 2}
    assert "independent" in out.split("Figure 7.")[1].split("\n\n")[0]
    # Figure 6: BTIO full on multi-partition at the square counts 1 and 4, classes S and W,
    # with NPB's statistics (0.83 and 22.12 MB written, as NPB prints them)
    fig6 = out.split("Figure 6.")[1].split("\n\n")[0]
    assert re.search(r"^\s+1\s+[\d.]+\s+[\d.]+", fig6, re.M) and re.search(r"^\s+4\s+[\d.]+\s+[\d.]+", fig6, re.M)
    btio = out.split("NAS btio on NPB's multi-partition: NPB's statistics of the run with the least T_T")[1]
    btio = btio.split("\n\n")[0]
    assert re.search(r"full\s+S\s+12\s+4 .* 0\.83 ", btio) and re.search(r"full\s+W\s+24\s+4 .* 22\.12 ", btio)
    assert len(list(plots.glob("*.png"))) >= 8
    assert list(disk_dir.iterdir()) == []   # every kernel removed what it created
    # shown again from the store, the same tables
    s = pario("show", "1", db=db)
    assert s.returncode == 0 and "Figure 8. Laplace solver" in s.stdout


def test_each_kernel_is_a_kind_of_its_own(tmp_path, shm_dir):
    exp = tmp_path / "perfonly.toml"
    exp.write_text(textwrap.dedent("""
        name = "perfonly"
        kind = "perf"
        [sweep]
        ranks = [2]
        [[test]]
        id = "p"
        sizes = ["1m"]
        repeats = 2
    """))
    p = pario("run", exp, "--dir", shm_dir, "--dry-run", db=tmp_path / "r.sqlite")
    assert p.returncode == 0, p.stderr
    assert "perf --size 1m --repeats 2 --dir" in p.stdout


def test_btio_plans_square_counts_only_and_says_why(tmp_path, shm_dir):
    exp = tmp_path / "btio.toml"
    exp.write_text(textwrap.dedent("""
        name = "btioonly"
        kind = "btio"
        [sweep]
        ranks = [1, 2, 4, 25]
        [[test]]
        id = "b"
        subtype = "simple"
        classes = ["S"]
    """))
    p = pario("run", exp, "--dir", shm_dir, "--dry-run", db=tmp_path / "r.sqlite")
    assert p.returncode == 0, p.stderr
    assert "bt --class S --io simple --decomposition multipartition --dir" in p.stdout
    assert "multi-partition needs a square rank count, not 2" in p.stdout
    assert "class S on 25 ranks gives cells under NPB's 3 points" in p.stdout


def _suite(tmp_path, test_lines):
    exp = tmp_path / "bad.toml"
    exp.write_text('name = "bad"\nkind = "suite"\n[sweep]\nranks = [1]\n[[test]]\nid = "x"\n' + test_lines)
    return exp


def test_a_bad_suite_file_is_refused_in_one_line(tmp_path, shm_dir):
    cases = [('study = "bonnie"\nsizes = ["1m"]\n', "test[1].sizes: unknown key"),
             ('study = "iozone"\n', "'iozone' is unknown"),
             ('study = "laplace"\ncb = "maybe"\n', "test[1].cb"),
             ('study = "perf"\n', "test[1].sizes: missing"),
             ('study = "btio"\nclasses = ["S"]\nsubtype = "pipes"\n', "test[1].subtype"),
             ('study = "btio"\nclasses = ["Q"]\n', "'Q' is not a BT class"),
             ('study = "btio"\n', "test[1].classes: missing"),
             ('study = "bonnie"\nquick = { chunk = 8 }\nchunk = "8k"\n', "test[1].quick.chunk: 8 is a bare number"),
             ('study = "bonnie"\nquick = { chunk = "8" }\nchunk = "8k"\n', None)]
    for text, phrase in cases:
        p = pario("run", _suite(tmp_path, text), "--dir", shm_dir, "--dry-run", db=tmp_path / "r.sqlite")
        if phrase is None:
            assert p.returncode == 0, p.stderr
            continue
        lines = p.stderr.strip().splitlines()
        assert p.returncode != 0 and len(lines) == 1 and phrase in lines[0], (text, p.stderr)
