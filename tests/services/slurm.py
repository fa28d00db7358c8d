#!/usr/bin/env python3
"""A Slurm cluster of one node on 127.0.0.1, all of it in one directory:
its own munged (own key and socket), slurmctld and slurmd with their own
state and spool directories and free ports, so it touches nothing of the
system's Slurm or munge set-up.

Without cgroups: proctrack/linuxproc and task/none (Debian's Slurm 22.05
runs so in a container).  Clients find it through SLURM_CONF.

By hand:
    python3 tests/services/slurm.py start /var/tmp/pario-slurm   # prints export SLURM_CONF=...
    SLURM_CONF=/var/tmp/pario-slurm/slurm.conf salloc -n 2 ...
    python3 tests/services/slurm.py stop /var/tmp/pario-slurm
"""

import os
import shutil
import socket
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python3 tests/services/slurm.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "services"
from .common import (Processes, ServiceError, free_port, program, remove_if_empty, require_free_port,
                     require_programs, require_root, run, service_main, wait_until)

PACKAGES = ["slurm-wlm", "munge"]
NODE = "pario1"
PARTITION = "pario"


class SlurmCluster:
    def __init__(self, directory, cpus=None):
        self.dir = Path(directory).resolve()
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = self.dir / "slurm.conf"
        self.munge_socket = self.dir / "munge" / "munge.socket"
        self.procs = Processes(self.dir)

    @property
    def env(self):
        """The environment a Slurm client needs to reach this cluster."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env["SLURM_CONF"] = str(self.conf)
        return env

    def start(self, ready_seconds=60):
        require_root("a Slurm cluster")
        require_programs("a Slurm cluster", ["munged", "mungekey", "slurmctld", "slurmd", "srun",
                                             "salloc", "sbatch", "scontrol", "sinfo"], PACKAGES)
        if self.dir.exists() and any(self.dir.iterdir()):
            raise ServiceError(f"{self.dir} is not empty (a cluster already there?): "
                               f"stop it with 'python3 tests/services/slurm.py stop {self.dir}' or use another directory")
        try:
            self._start(ready_seconds)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, ready_seconds):
        for sub in ("munge", "state", "spool", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        # munged wants every directory up to its socket searchable by all
        os.chmod(self.dir, 0o755)
        os.chmod(self.dir / "munge", 0o755)
        key = self.dir / "munge" / "munge.key"
        made = run([program("mungekey"), "--create", f"--keyfile={key}"])
        if made.returncode != 0:
            raise ServiceError(f"mungekey failed: {made.stderr.strip()[:200]}")
        ctld_port, slurmd_port = free_port(), free_port()
        for port in (ctld_port, slurmd_port):
            require_free_port("slurm", port)
        self.conf.write_text(self._config(ctld_port, slurmd_port))
        log = self.dir / "log"
        self.procs.start([program("munged"), "-F", f"--socket={self.munge_socket}", f"--key-file={key}",
                          f"--log-file={log / 'munged.log'}", f"--pid-file={self.dir / 'munge' / 'munged.pid'}",
                          f"--seed-file={self.dir / 'munge' / 'munged.seed'}"], log / "munged.out")
        wait_until("munged", self.munge_socket.exists, 10, log / "munged.log")
        self.procs.start([program("slurmctld"), "-D", "-c", "-i", "-f", str(self.conf)], log / "slurmctld.out")
        wait_until("slurmctld", self._controller_up, ready_seconds, log / "slurmctld.log")
        self.procs.start([program("slurmd"), "-D", "-N", NODE, "-f", str(self.conf)], log / "slurmd.out")
        wait_until("slurmd (node idle)", self._node_idle, ready_seconds, log / "slurmd.log")

    def _config(self, ctld_port, slurmd_port):
        d = self.dir
        memory_mib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        return "\n".join([
            "ClusterName=pario",
            # slurmctld starts only where its host name is the SlurmctldHost's
            f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={slurmd_port}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={d / 'state'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/builtin",
            "MpiDefault=none",
            "ReturnToService=2",
            "SwitchType=switch/none",
            "JobCompType=jobcomp/none",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "KillWait=2",
            "InactiveLimit=0",
            f"NodeName={NODE} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 "
            f"CPUs={self.cpus} RealMemory={max(memory_mib - 1024, 256)} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
            "",
        ])

    def _client(self, *argv):
        try:
            return run(list(argv), timeout=5, env=self.env)
        except Exception:
            return None

    def _controller_up(self):
        p = self._client("scontrol", "ping")
        return bool(p) and " is UP" in p.stdout

    def _node_idle(self):
        p = self._client("sinfo", "-h", "-n", NODE, "-o", "%T")
        return bool(p) and p.stdout.strip() == "idle"

    def stop(self):
        """Cancel every job, stop the daemons, remove the directory."""
        if self.conf.exists() and self._controller_up():
            self._client("scancel", "--full", f"--partition={PARTITION}")
        self.procs.stop()
        # only what start() made: the directory may have been given by hand
        for name in ("munge", "state", "spool", "log"):
            shutil.rmtree(self.dir / name, ignore_errors=True)
        for name in ("slurm.conf", "slurmctld.pid", "slurmd.pid"):
            (self.dir / name).unlink(missing_ok=True)
        remove_if_empty(self.dir)


def main(argv):
    def started(service):
        print(f"export SLURM_CONF={service.conf}")
    return service_main(argv, "slurm", SlurmCluster, started)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
