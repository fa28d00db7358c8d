"""The service starters refuse with one line naming the problem and the
fix: a port taken, a program missing, not root, a directory in use."""

import os
import socket
import subprocess
import sys

import pytest

from conftest import ROOT
from services import common
from services.common import ServiceError


def test_a_taken_port_is_named():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(ServiceError, match=f"port {port} on 127.0.0.1 is taken: stop what listens"):
            common.require_free_port("glusterd", port)
        # glusterd's port is a constant: no advice to choose another (tester 3, 13e)
        with pytest.raises(ServiceError, match=r"sport = :\d+'\); glusterd needs this port$"):
            common.require_free_port("glusterd", port, fixed=True)


def test_a_missing_program_names_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(common, "program", lambda name: None)
    with pytest.raises(ServiceError, match=r"pario-no-such-daemon not installed: run 'make deps' \(Debian packages x-server\)"):
        common.require_programs("x", ["pario-no-such-daemon"], ["x-server"])


def test_not_root_is_refused(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ServiceError, match="needs root"):
        common.require_root("a Slurm cluster")


@pytest.mark.parametrize("service", ["slurm", "gluster"])
def test_scripts_refuse_a_directory_in_use_with_one_line(service, tmp_path):
    (tmp_path / "someone-elses-file").write_text("x")
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "services" / f"{service}.py"), "start",
                        str(tmp_path)], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert lines[0].startswith(f"{service}: error: ") and "is not empty" in lines[0]
    assert os.listdir(tmp_path) == ["someone-elses-file"]  # nothing touched


def test_scripts_usage_is_one_line():
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "services" / "slurm.py"), "restart"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("usage: ")
