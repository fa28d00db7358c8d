"""Tester report 8, items 5 and 17 (machines): a --machine file gets the
input-file checks an experiment file gets (one reader, pario.tomlfile): not
UTF-8, too large, a fifo (which hung for ever) or a directory are one line;
a machine file named x.TOML or by a path without a suffix is read, and an
unknown name says what was looked for; a --set key given twice is refused;
a machine printed with --set says so in its name and title."""

import os
import tomllib

import pytest

from conftest import ROOT  # noqa: F401  (sys.path for pario)
from test_front_end import pario

MODEL = ["model", "cfs", "--quick", "--tests", "partitioned"]


def _one_error(r):
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


@pytest.mark.parametrize("case", ["not utf-8", "too large", "fifo", "directory"])
def test_a_machine_file_gets_the_experiment_files_checks(tmp_path, case):
    db = tmp_path / "m.sqlite"
    path = tmp_path / "m.toml"
    if case == "not utf-8":
        path.write_bytes(b"\xff\xfe bad utf")
        expect = f"{path}: not UTF-8 text (byte 0): save the file as UTF-8"
    elif case == "too large":
        path.write_bytes(b"#" * 3_000_000)
        expect = f"{path} is 3000000 bytes, too large to be A_WHAT (at most 1048576): give a .toml WHAT file"
    elif case == "fifo":
        os.mkfifo(path)
        expect = f"{path} is not a regular file (a device, fifo or socket): give a .toml WHAT file"
    else:
        path.mkdir()
        expect = f"{path} is a directory: give a .toml WHAT file"
    r = pario(*MODEL, "--machine", str(path), db=db, timeout=60)  # a fifo hung for ever
    assert _one_error(r) == "pario: error: " + expect.replace("A_WHAT", "a machine").replace("WHAT", "machine")
    assert not db.exists()
    # the experiment path says the same, from the same reader
    r = pario("model", str(path), "--machine", "ipsc860", db=db, timeout=60)
    assert _one_error(r) == "pario: error: " + expect.replace("A_WHAT", "an experiment").replace(
        "WHAT", "experiment")

@pytest.mark.parametrize("name", ["m.TOML", "m"])
def test_a_machine_file_of_any_suffix_named_by_its_path_is_read(tmp_path, name):
    printed = pario("model", "--machine", "ipsc860", "--print-machine", db=tmp_path / "x.sqlite")
    assert printed.returncode == 0, printed.stderr
    path = tmp_path / name
    path.write_text(printed.stdout)
    r = pario(*MODEL, "--machine", str(path), db=tmp_path / "m.sqlite")
    assert r.returncode == 0, r.stderr
    assert f"model of ipsc860 (from {path})" in pario("list", db=tmp_path / "m.sqlite").stdout


def test_an_unknown_machine_name_says_what_was_looked_for(tmp_path):
    r = pario(*MODEL, "--machine", "cray-1", db=tmp_path / "m.sqlite")
    assert _one_error(r) == (
        "pario: error: machine 'cray-1' is unknown: use one of asci-red, ipsc860 (or probe:RUN, this host as "
        "a stored 'pario probe' run measured it) or a .toml file (no machine "
        "of that name is shipped; a file of your own is named by its path: ending in .toml, or with a /)")
    # a file of that name in the current directory: how to name it
    r = pario(*MODEL, "--machine", "README.md", db=tmp_path / "m.sqlite")
    assert "to read the file README.md here, give it as ./README.md" in _one_error(r)


def test_a_set_key_given_twice_is_refused(tmp_path):
    r = pario(*MODEL, "--machine", "ipsc860", "--set", "disk.write_rate=1MB/s", "--set",
              "disk.write_rate = 2MB/s", db=tmp_path / "m.sqlite")
    assert _one_error(r) == ("pario: error: --set disk.write_rate is given twice ('disk.write_rate=1MB/s' and "
                             "'disk.write_rate = 2MB/s'): give each parameter once")
    assert not (tmp_path / "m.sqlite").exists()


def test_a_machine_printed_with_set_says_so_in_its_name_and_title(tmp_path):
    db = tmp_path / "m.sqlite"
    r = pario("model", "--machine", "ipsc860", "--set", "io_node.cache=5MB", "--print-machine", db=db)
    assert r.returncode == 0, r.stderr
    doc = tomllib.loads(r.stdout)
    assert doc["name"] == "ipsc860 with --set io_node.cache=5MB"
    assert doc["title"].endswith(", with io_node.cache=5MB set by hand (--set)")
    assert doc["io_node"]["cache"] == {"value": "5MB", "source": "--set io_node.cache=5MB"}
    kept = tmp_path / "set.toml"
    kept.write_text(r.stdout)
    assert pario(*MODEL, "--machine", str(kept), db=db).returncode == 0
    assert f"model of ipsc860 with --set io_node.cache=5MB (from {kept})" in pario("list", db=db).stdout
    # printed again without --set: the name it was given, nothing piled on
    again = tomllib.loads(pario("model", "--machine", str(kept), "--print-machine", db=db).stdout)
    assert again["name"] == doc["name"] and again["title"] == doc["title"]
