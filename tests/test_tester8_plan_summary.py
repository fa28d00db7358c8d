"""Tester report 8, item 17: the plan's one error line for a plan with no
runnable point says what its skip lines say (it said "each rank needs at
least one whole block" under lines saying "size is not a whole number of
blocks")."""

import re

from test_front_end import pario


def test_the_summary_says_what_the_skip_lines_say(tmp_path, shm_dir):
    r = pario("run", "cfs", "--quick", "--blocks", "3k", "--dir", shm_dir, "--dry-run", db=tmp_path / "r.sqlite")
    errors = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(errors) == 1, r.stderr
    skipped = {m.group(1) for m in re.finditer(r"^plan: skipping .*?: (.*)$", r.stdout, re.M)}
    assert skipped == {"size is not a whole number of blocks", "size is not a whole number of ranks x blocks"}
    said = re.match(r"pario: error: the plan has no runnable point \((.*)\): check ", errors[0]).group(1)
    assert set(said.split("; ")) == skipped, errors[0]
