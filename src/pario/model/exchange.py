"""What a two-phase aggregator (two_phase.py) spends on one collective
buffer: its CPU work around the buffer and the buffer's one transfer to or
from storage.

ROMIO's two-phase I/O, as the engine's `--collective` drives it (the
presets choose ROMIO; a run records it as api_options.implementation
romio321): per buffer, the aggregator learns from every rank how much of
it each one holds (an MPI_Alltoall), receives each other rank's bytes as an
MPI message and its own through a message to itself (a copy), then writes
the buffer with one system call of the buffer's extent; a read runs the
other way (one read of the extent, then the messages out).  A buffer with
holes is read first (a write) or has its holes copied (a read).

On a host the ranks share (a probed machine), two things set the time:

* the CPU work, on one of host.cores: the copy of every byte through the
  buffer (agent.copy_rate), each other rank's message
  (agent.message_overhead + bytes / agent.message_rate), the holes through
  the page cache (host.cached_read_rate);
* the transfer, on the storage: a call of a collective buffer (16 MiB) is
  far above the probe's stream calls (4 KiB to 1 MiB), and this host's
  storage does not follow the stream's line there (its page cache takes
  such calls in large folios, its read-ahead serves them otherwise), so a
  machine that measured streams in buffer-sized calls
  (disk.buffer_write_rate, disk.buffer_read_rate, and for two or more
  aggregators at once disk.shared_buffer_*) charges the buffer's extent at
  those rates; one that did not (a described machine, an older probe)
  charges it as any other disk transfer.  Several aggregators' writes
  come in a collective's order: one file's buffered writes pass one at a
  time (the file's lock, held while a write copies into the page cache;
  strace -T of 4 aggregators here: four 8 MiB pwrites begun within 1.9
  ms ended one after another, 1.6 to 1.8 ms apart, taking 2.2 to 5.6 ms
  each), and the write-back starts
  only when every aggregator's writes are done (the call ends in an
  agreement of every rank, the engine's check that no rank failed, then
  MPI_File_sync: all four fsyncs began within 0.1 ms of the last pwrite's
  end).  The shared write rate is measured in that order (the probe's
  two writers fsync after both have written); a probe whose two writers
  each fsynced on their own measured one's write-back beside the other's
  writes, which a collective never has, and gives none: the one writer's
  rate, its calls then its fsync, is then the collective's;
* on a host whose ranks outnumber its cores (host.cores), the waits:
  Open MPI then waits by polling and yielding (mpi_yield_when_idle, set for
  an oversubscribed node), and a rank that yields beside a rank computing
  without yielding (an aggregator copying its buffer or writing it into the
  page cache) runs again only after that one's share of the core.  Each
  round of an aggregator's write ends in a step that needs every rank (the
  next round's exchange, or the call's closing agreement), so each buffer
  written costs host.busy_handover after its work (the probe's hand-over
  between two ranks that wait by MPI_Test and sched_yield while every core
  runs a busy thread).  Measured here (shared machine, 2 cores, load 16):
  11.8 ms per hand-over, where the token ring between idle ranks took 14
  us; 4 ranks of the ascired-servers point 'mpiio, 1 MiB, 4 aggregators'
  took a median 118 ms per write phase yielding and 1.28 s spinning
  (mpi_yield_when_idle 0).  A buffer read costs none: one aggregator read
  32 MiB in two buffers in 18.3-21.8 ms at 4 ranks on the 2 cores and in
  19.3-19.6 ms at 2 ranks (quiet, 2026-11-29: `mpirun -np N
  --oversubscribe pario-engine io --api mpiio --collective --mpiio-impl
  romio --aggregators 1 --layout partitioned --block 1m --size 32m
  --phases write,read --evict --iterations 6`, the first left out), and
  the model's one-aggregator reads at 4 ranks, charged it, were 0.69-0.97
  of the measurement in fifteen quiet checks; a buffered read waits on
  the device for much of its time, the aggregator's core free for the
  yielding ranks meanwhile, where a write's copy into the page cache keeps
  it busy."""


class BufferCosts:
    def __init__(self, sim):
        m = sim.machine
        self.sim = sim
        self.copy_rate = m["agent.copy_rate"]
        self.message_rate = m["agent.message_rate"]
        self.message_overhead = m["agent.message_overhead"]
        self.cached_read_rate = m["host.cached_read_rate"]
        several = sim.n_agents > 1
        # several writers: the rate measured in the collective's order, else
        # the one writer's (see above)
        self.write_rate = ((several and m["disk.shared_buffer_write_rate"])
                           or m["disk.buffer_write_rate"])
        self.read_rate = ((sim.n_agents >= 4 and m["disk.four_buffer_read_rate"])
                          or (several and m["disk.shared_buffer_read_rate"])
                          or m["disk.buffer_read_rate"])
        # ranks above the cores: each buffer written ends in a wait for ranks
        # yielding beside busy ones (a buffer read in none: above)
        self.write_handover = m["host.busy_handover"] if sim.crowded else 0.0

    def handover(self, op):
        """Seconds an aggregator's round of `op` ends in, waiting for ranks
        yielding beside busy ones (0: none)."""
        return self.write_handover if op == "write" else 0.0

    def work(self, a, buf, op):
        """CPU seconds aggregator a spends on buffer `buf` besides its
        transfer: every byte copied through the buffer, each other rank's
        bytes as an MPI message, and a buffer with holes read first (a
        write) or its holes copied (a read) through the page cache."""
        work = buf["data"] / self.copy_rate if self.copy_rate else 0.0
        if self.message_rate:
            for r, nbytes in buf["from"].items():
                if r != a:
                    work += self.message_overhead + nbytes / self.message_rate
        holes = buf["extent"] - buf["data"]
        if holes and self.cached_read_rate:
            work += (buf["extent"] if op == "write" else holes) / self.cached_read_rate
        return work

    def transfer(self, disk, nbytes, write):
        """Completion time of the buffer's one call to storage, queued on
        `disk` now: at the buffer-sized stream's rate where the machine
        has one, else as any disk transfer."""
        sim = self.sim
        rate = self.write_rate if write else self.read_rate
        if not rate:
            return sim.disk_transfer(disk, nbytes, write=write)
        return sim.disks[disk].reserve(sim.env.now, nbytes / rate)

    def counters(self, plan, op):
        """For the explanation: the aggregators' buffer transfers and the
        rate they went at (0: the disk's own rates)."""
        sizes = [b["extent"] for bufs in plan for b in bufs]
        rounds = max((len(bufs) for bufs in plan), default=0)
        return {"aggregators": len(plan), "transfers": len(sizes),
                "largest_bytes": max(sizes, default=0),
                "rate": self.write_rate if op == "write" else self.read_rate,
                # several aggregators' writes at the one writer's rate (above)
                "in_turn": (op == "write" and len(plan) > 1 and bool(self.write_rate)
                            and not self.sim.machine["disk.shared_buffer_write_rate"]),
                "handover_seconds": self.handover(op),
                "handover_rounds": rounds if self.handover(op) else 0,
                "ranks": self.sim.ranks, "cores": self.sim.machine["host.cores"]}
