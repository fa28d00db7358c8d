"""One point of an experiment through the model of a machine.

The I/O path, in the order a byte travels:

  rank ─(call overhead)─> [service agent] ─> pieces of the call, one stripe
  unit each (client.outstanding of them in flight) ─(request message:
  network.latency)─> I/O node door (io_node.max_outstanding) ─> I/O node
  processor (copy) ─> block cache or disk ─> reply over the I/O node's link
  and the rank's link (and the backplane) ─(network.latency)─> rank

Each phase runs under the CFS timing rule: all ranks start together, open,
do their calls, close; the phase time is the latest rank's end.  With
grouping, ranks r = g, g+G, g+2G, ... form group g and pass a token after
every call (one message each), as the engine's token ring does.

Every resource keeps its busy time and its queueing, so explain.py can say
what bounded a point."""

import math

from ..errors import UsageError
from .cache import BlockCache
from .core import Environment, Resource, Server, ServerPool, reserve_together
from . import read_start
from .exchange import BufferCosts
from .page_cache import READY, PageCache
from .params import API_KIND, ATOMIC_APIS
from .two_phase import plan as two_phase_plan
from .workload import rank_offsets


class IONode:
    def __init__(self, sim, index):
        m = sim.machine
        self.cpu = Server(f"io_node{index}.cpu")
        self.link = self.cpu if m["io_node.link_dma"] == "no" else Server(f"io_node{index}.link")
        self.cache = BlockCache(sim, self) if m["io_node.cache"] else None
        self.door = None

    def servers(self):
        return [self.cpu] if self.link is self.cpu else [self.cpu, self.link]


class Simulation:
    def __init__(self, machine, point, env_factory=Environment, seed=1):
        m = self.machine = machine
        self.point = point
        self.env_factory = env_factory
        self.seed = seed
        if point.api not in API_KIND:
            raise UsageError(f"api '{point.api}' has no model: use one of {', '.join(API_KIND)}")
        self.sync = API_KIND[point.api] == "sync"
        P = self.ranks = point.ranks
        self.unit = m["stripe.unit"]
        self.stripes = m["stripe.count"]
        self.lat = m["network.latency"]
        # A host's cores (host.cores, 0 = a processor per rank): CPU work
        # waits for a free one, and with more ranks than cores the token's
        # next holder must first be scheduled in.
        cores = m["host.cores"]
        self.core_pool = ServerPool("core", cores) if cores else None
        self.crowded = bool(cores) and P > cores
        self.token_lat = m["network.token_latency_crowded" if self.crowded else "network.token_latency"]
        self.page_cache = PageCache(m["host.page_cache"]) if m["host.page_cache"] else None
        self.cached_read_rate = m["host.cached_read_rate"]
        self.cached_read_overhead = m["host.cached_read_overhead"]
        self.link_rate = m["network.link_rate"]
        self.bp_rate = m["network.backplane_rate"]
        self.mem_rate = m["io_node.memory_rate"]
        self.post = m["io_node.request_overhead"]
        self.disk_rate = m["disk.rate"]
        self.disk_overhead = m["disk.overhead"]
        self.disk_write_rate = m["disk.write_rate"]
        self.disk_write_overhead = m["disk.write_overhead"]
        self.outstanding = m["client.outstanding"]
        self.call_overhead = m["client.call_overhead"]

        # The token rings that act: G of them where the group is below the
        # ranks (rank r in ring r % G), none otherwise (every rank its own).
        self.rings = point.group if point.group and point.group < P else 0
        per_rank_files = point.files == "per-rank" and point.layout != "broadcast"
        self.file_bytes = point.size // P if per_rank_files else point.size
        self.sharers = 1 if per_rank_files else P
        self.file_of = (lambda r: r) if per_rank_files else (lambda r: 0)
        self.file_units = -(-self.file_bytes // self.unit)
        self.offsets = [rank_offsets(point.layout, self.file_bytes, point.block, self.sharers,
                                     0 if per_rank_files else r, seed) for r in range(P)]

        self.io_nodes = [IONode(self, i) for i in range(m["io_node.count"])]
        per_node = m["io_node.disks"]
        self.disks = [Server(f"disk{d}") for d in range(m["io_node.count"] * per_node)]
        self.node_of_disk = [self.io_nodes[d // per_node] for d in range(len(self.disks))]
        self.rank_links = [Server(f"rank{r}.link") for r in range(P)]
        self.backplane = Server("backplane") if self.bp_rate else None

        rpa = m["agent.ranks_per_agent"]
        self.n_agents = m["agent.count"] or (math.ceil(P / rpa) if rpa else 0)
        # Collective MPI-IO's aggregators (--aggregators with --collective)
        # do the I/O for every rank, as the fyods did for the compute
        # nodes (the ascired-servers preset's mapping): they are the job's
        # service agents, whatever the machine's default.
        options = list(getattr(point, "options", []))
        self.aggregating = bool(getattr(point, "aggregators", 0)) and "--collective" in options
        if self.aggregating:
            self.n_agents = point.aggregators
        self.agent_copy = m["agent.copy_rate"]
        self.message_rate = m["agent.message_rate"]
        self.message_overhead = m["agent.message_overhead"]
        # The MPI-IO library's own open and close (HDF5 opens through it).
        self.library_open = m["client.mpiio_open_close"] if point.api in ("mpiio", "hdf5") else 0.0
        # A collective call's own cost (every rank, on a core), per phase.
        self.collective_cost = ({"read": m["client.collective_overhead"],
                                 "write": m["client.collective_write_overhead"]}
                                if "--collective" in options else None)
        # With a collective buffer (agent.cb_buffer) a collective point on
        # a shared file is ROMIO's two-phase I/O over the whole access list
        # (two_phase.py), one rank as well (ROMIO's single aggregator then
        # works through its own list a buffer at a time): one call per rank
        # and phase, the aggregators moving the file; exchange.py prices
        # each buffer.
        self.two_phase = (two_phase_plan(self.offsets, point.block, self.n_agents, m["agent.cb_buffer"])
                          if self.aggregating and not per_rank_files and m["agent.cb_buffer"] else None)
        self.buffers = BufferCosts(self) if self.two_phase is not None else None
        # Several streams of different bytes at once take the disk's rates
        # for several (the probe's two at once): the aggregators of a
        # two-phase point, every rank otherwise; a broadcast is one stream
        # (its later readers find the bytes cached).  Readers count grouped
        # or not (a token paces the calls, not the read-ahead each rank
        # keeps in flight between its turns: G=2 at 4 ranks made the device
        # requests of 4 ranks without a token, 31-33 of about 1 MiB for 32
        # MiB at 64 KiB calls, 35 of 936 KiB at 4 KiB); so one ring (G=1)
        # of interleaved readers reads at the interleaved readers' rate, each
        # rank's own descriptor seeing every other block; writers only one
        # per group (a write is done when its call returns).
        if self.two_phase is not None:
            streams = write_streams = self.n_agents
        elif point.layout == "broadcast":
            streams = write_streams = 1
        else:
            streams, write_streams = P, (self.rings or P)
        self.read_rate_key = "disk.rate"  # which rate the disk reads at (explain.py says it)
        if streams > 1 and m["disk.shared_read_rate"]:
            self.disk_rate = m["disk.shared_read_rate"]
            self.read_rate_key = "disk.shared_read_rate"
        # Four or more streams at once (the probe's four readers; on its two
        # cores, more readers than cores).
        if streams >= 4 and m["disk.four_read_rate"]:
            self.disk_rate = m["disk.four_read_rate"]
            self.read_rate_key = "disk.four_read_rate"
        # A broadcast's readers read the same bytes at once, each with its
        # own read-ahead: its one stream from the disk at the probe's rate
        # for two readers of the same bytes; the later readers' copies
        # from the page cache come on top (page_cache.py).
        if point.layout == "broadcast" and P > 1 and m["disk.same_read_rate"]:
            self.disk_rate = m["disk.same_read_rate"]
            self.read_rate_key = "disk.same_read_rate"
        # Several ranks reading one file in interleaved blocks at once: no
        # rank reads on from where it stopped (the probe's two interleaved
        # readers); a two-phase point's aggregators read contiguous buffers.
        # Readers on cores of their own run in step and lose the read-ahead
        # race below in most trials (the engine: 16 of 16 trials of two
        # ranks, 32 MiB in 64 KiB calls, 22-26.5 ms against one rank's
        # 10-13), where the probe's 64 MiB row escapes it in some: they take
        # that row halfway to its median trial (disk.interleaved_typical_*).
        # Readers that outnumber the cores take turns on them and keep their
        # windows more often (four ranks: 12.5-28.5 ms): the row's best trial.
        interleaved = ("disk.interleaved_typical_" if m["disk.interleaved_typical_read_rate"]
                       and not self.crowded else "disk.interleaved_")
        sharing_interleaved = (streams > 1 and point.layout == "interleaved" and self.sharers > 1
                               and self.two_phase is None)
        if sharing_interleaved and m["disk.interleaved_read_rate"]:
            self.disk_rate = m[interleaved + "read_rate"]
            self.disk_overhead = m[interleaved + "read_overhead"]
            self.read_rate_key = interleaved + "read_rate"
        # Four or more of them (the probe's four interleaved readers): on
        # two cores they take turns and keep their windows more often than
        # two (the quiet checks' 4-rank shared-file reads made 15-44 device
        # requests for 32 MiB, two ranks 40-89), but less often than four
        # readers of quarters; the row's fit has whatever race they run in
        # it, so none is charged apart.  A token ring that acts runs no
        # race (below), so its readers keep the two readers' best trial.
        if sharing_interleaved and streams >= 4 and m["disk.four_interleaved_read_rate"] and not self.rings:
            self.disk_rate = m["disk.four_interleaved_read_rate"]
            self.disk_overhead = m["disk.four_interleaved_read_overhead"]
            self.read_rate_key = "disk.four_interleaved_read_rate"
        # The read-ahead race of interleaved readers of one file (docs/model.md):
        # from some call size on, their read-ahead marks land on each other's
        # calls and the device gets a number of extra small requests per
        # phase, whatever the file's length; the disk is held for them once
        # per read phase.
        # A token ring that acts (a group below the ranks) hands each group's
        # turn on after every call, so no rank runs ahead of the others and
        # there is no race (the quiet databases' G=2 reads at 4 ranks kept
        # their windows: 11-15 requests for 32 MiB at 1 MiB calls).
        self.race_seconds, self.race_key = 0.0, None
        if (self.read_rate_key == interleaved + "read_rate" and m[interleaved + "race_requests"]
                and point.block >= m[interleaved + "race_from"] and not self.rings):
            self.race_seconds = m[interleaved + "race_requests"] * m["disk.interleaved_request_overhead"]
            self.race_key = interleaved + "race_requests"
        self.write_rate_key = "disk.write_rate"  # which rate the disk writes at (explain.py says it)
        if write_streams > 1 and m["disk.shared_write_rate"]:
            self.disk_write_rate = m["disk.shared_write_rate"]
            self.write_rate_key = "disk.shared_write_rate"
        # Writers of a file each copy into the page cache side by side, where
        # writers of one file take turns at its write lock (the probe's two
        # writers of a file each against its two writers of halves of one
        # file: 22-26 ms against 27-36 ms for 64 MiB in 64 KiB calls, 48-60
        # against 72-86 ms in 4 KiB calls, alike in 1 MiB calls).
        if write_streams > 1 and per_rank_files and m["disk.files_write_rate"]:
            self.disk_write_rate = m["disk.files_write_rate"]
            self.disk_write_overhead = m["disk.files_write_overhead"]
            self.write_rate_key = "disk.files_write_rate"
        # A write phase into a new file without --prealloc: the file system
        # allocates the blocks as they are written back, which costs each
        # byte (and call) what the probe's write into a new file cost more
        # than its write into reserved space, whoever writes it.
        if "--prealloc" not in point.extra and m["disk.alloc_write_rate"]:
            per_byte = (1 / self.disk_write_rate + 1 / m["disk.alloc_write_rate"]
                        - 1 / m["disk.write_rate"])
            self.disk_write_rate = 1 / per_byte if per_byte > 0 else m["disk.alloc_write_rate"]
            self.disk_write_overhead = max(0.0, self.disk_write_overhead + m["disk.alloc_write_overhead"]
                                           - m["disk.write_overhead"])
        # A read phase's fixed start on each rank (the kernel's first
        # read-ahead, sized from the call: read_start.py), side by side
        # with the other ranks, not on the disk.  A two-phase point's
        # aggregators read ROMIO's buffers (agent.cb_buffer at most).
        self.read_latency = read_start.start_seconds(m, point.block)
        self.aggregator_read_latency = read_start.largest_call_start(m, m["agent.cb_buffer"] or point.block)
        # Except: a host's readers of different bytes (partitioned shares,
        # files of their own), each on a core of its own (host.cores, as
        # measured), open their first windows at once, and the device reads
        # those windows one after another, so the part of each start that
        # grows with the window (its bytes at disk.read_start_rate) takes
        # the disk (docs/model.md, "Two readers' first windows").  Ranks
        # above the cores take turns on them and open their windows apart:
        # four readers on two cores do not wait for each other's whole.
        distinct = point.layout == "partitioned" or per_rank_files
        self.start_on_disk = (read_start.window_seconds(m, point.block)
                              if distinct and 1 < P <= cores and not self.aggregating else 0.0)
        # Readers of the same bytes in step (docs/model.md, "A broadcast's
        # readers in step while the read-ahead ramps"): while a broadcast's
        # read-ahead windows still grow, every reader waits at each window
        # and copies it before the next is read, so the later readers'
        # copies do not overlap the stream there (the engine: two readers
        # of 8 MiB in 4 KiB calls take one reader's time and the cached
        # copy of both; four, on two cores, as four cached readers more);
        # beyond the ramp the windows run ahead of the copies.  A token
        # that acts already makes the readers take turns.
        self.in_step_reach = (read_start.ramp_reach(point.block, m["disk.read_ahead"])
                              if point.layout == "broadcast" and P > 1 and self.page_cache is not None
                              and not self.rings else 0)
        # The short shares' race (docs/model.md): four or more ranks reading
        # one file in contiguous shares, each shorter than a reader's
        # read-ahead ramp reaches, so a reader's windows ask for its
        # neighbour's first bytes early and cut the neighbour's own; as the
        # probe's four readers of one-window shares lost it, once per read
        # phase, whether a token paces each group or not (the neighbour of a
        # rank is in another group).  A two-phase point's aggregators read
        # their domains in buffer-sized calls, whose first window is the
        # largest: no ramp.
        self.share = self.file_bytes // max(1, self.sharers)
        if (point.layout == "partitioned" and self.sharers >= 4 and self.two_phase is None
                and m["disk.share_race_restarts"] and point.block >= m["disk.share_race_from"]
                and self.share < read_start.ramp_reach(point.block, m["disk.read_ahead"])):
            # each restart a new first window, as at a reader's start
            self.race_seconds += m["disk.share_race_restarts"] * self.read_latency
            self.race_key = "disk.share_race_restarts"
        # A shared file under munix is one token between agents (ASCI Red
        # report, section 2.6); with one agent there is no one to serialise.
        # An MPI-IO or HDF5 test states its own semantics: --atomic is
        # MUNIX (reads and writes atomic, the token), relaxed is MASYNC, so
        # one run shows both as the report's Figure 11 does; other APIs have
        # no such switch and run in the machine's mode (agent.mode).
        self.munix = (("--atomic" in options) if point.api in ATOMIC_APIS
                      else m["agent.mode"] == "munix")
        self.file_token_needed = (self.munix and self.n_agents > 1 and self.sharers > 1)
        # MPI-IO's atomic mode as ROMIO keeps it on a local file system: a
        # byte-range lock of each call's range, dropped after the call, on
        # the rank's core; the ranks' ranges differ, so no lock waits.
        self.lock_cost = m["file.lock_overhead"] if "--atomic" in options else 0.0
        # The engine's --group-unit: the token moves after every call
        # (default) or after a rank's whole share.
        extra = list(point.extra)
        self.per_rank_grain = ("--group-unit" in extra and
                               extra[extra.index("--group-unit") + 1:][:1] == ["rank"])
        # The engine's default: fsync before close in write phases.
        self.fsync = "--no-fsync" not in extra
        # Token rings writing one file on a host whose ranks outnumber its
        # cores: the file's write lock (a local file system's inode lock,
        # the disk's write path here) passes from ring to ring, and with
        # the ranks free to move between cores the next ring's writer often
        # waits on the core of the lock's holder, so it sleeps and is
        # switched in when the lock comes free, the lock idle meanwhile:
        # each change of the lock's ring costs the crowded hand-over on the
        # disk.  Measured (4 ranks in 2 rings, 2 cores, 32 MiB of 4 KiB
        # writes): 30-36 ms of write calls into one file, 18-20 ms into a
        # file per rank, and 21-23 ms into one file with each ring bound to
        # a core of its own (the lock's waiter then spins on the other core);
        # ranks writing without a token always have a writer running to
        # take the lock (4 ranks: 22-27 ms, one rank 19 ms).
        self.lock_handoff = (self.token_lat if self.crowded and self.rings >= 2 and self.sharers > 1
                             and not self.aggregating else 0.0)

    # -- helpers the cache uses -------------------------------------------
    def cpu(self, arrival, service):
        """Completion time of `service` seconds of CPU work arriving at
        `arrival` (>= now): on the first free core, or at once without
        host.cores."""
        if self.core_pool is None:
            return arrival + service
        return self.core_pool.reserve(arrival, service)

    def disk_of(self, f, u):
        return (f + u) % self.stripes

    def disk_transfer(self, disk, nbytes, write=False, ring=None):
        """Completion time of a transfer of `nbytes` queued on `disk` now;
        a write names its token ring (`ring`) where the file's write lock
        passes between rings (self.lock_handoff)."""
        if write:
            handoff = 0.0
            if self.lock_handoff and ring is not None:
                if self.lock_ring is not None and self.lock_ring != ring:
                    handoff = self.lock_handoff
                    self.lock_handoffs += 1
                self.lock_ring = ring
            return self.disks[disk].reserve(self.env.now, handoff + self.disk_write_overhead
                                            + nbytes / self.disk_write_rate)
        race, self.race_left = self.race_left, 0.0  # the phase's race, with its first read
        return self.disks[disk].reserve(self.env.now, race + self.disk_overhead + nbytes / self.disk_rate)

    def _move(self, ion, rank, nbytes, arrival):
        """A message of `nbytes` between an I/O node and a rank."""
        if not self.link_rate:  # no network: ranks and server share one host's memory
            return arrival
        t = nbytes / self.link_rate
        if self.backplane is None:  # the common case, kept cheap: both ends at once
            a, b = ion.link, self.rank_links[rank]
            start = max(arrival, a.free_at, b.free_at)
            a.waited += start - arrival
            b.waited += start - arrival
            a.free_at = b.free_at = start + t
            a.busy += t
            b.busy += t
            a.jobs += 1
            b.jobs += 1
            return start + t
        return reserve_together((ion.link, self.rank_links[rank], self.backplane), arrival,
                                (t, t, nbytes / self.bp_rate))

    # -- one piece (one stripe unit's worth of a call) ----------------------
    def _read_piece(self, r, f, u, nbytes):
        env = self.env
        d = (f + u) % self.stripes
        ion = self.node_of_disk[d]
        door = ion.door
        if door is not None:
            yield env.timeout(self.lat)
            yield door.acquire()
            arrival = env.now
        else:
            arrival = env.now + self.lat
        copy = nbytes / self.mem_rate if self.mem_rate else 0.0
        yield env.timeout(ion.cpu.reserve(arrival, copy) - env.now)
        cache = ion.cache
        if cache is not None:
            key = (f << 40) | u
            e = cache.entries.get(key)
            if e is not None and e.state == 1:  # CLEAN: a hit, no waiting
                cache.hit(key, e, f, d, self.file_units)
            else:
                yield from cache.read(f, u, d, self.file_units)
        else:
            yield env.timeout(self.disk_transfer(d, nbytes) - env.now)
        end = self._move(ion, r, nbytes, env.now)
        if self.post:
            ion.cpu.reserve(end, self.post)
        if door is not None:
            door.release()
        yield env.timeout(end - env.now + self.lat)

    def _write_piece(self, r, f, u, nbytes):
        env = self.env
        d = (f + u) % self.stripes
        ion = self.node_of_disk[d]
        door = ion.door
        if door is not None:
            yield env.timeout(self.lat)
            yield door.acquire()
            arrival = env.now
        else:
            arrival = env.now + self.lat
        landed = self._move(ion, r, nbytes, arrival)
        copy = nbytes / self.mem_rate if self.mem_rate else 0.0
        yield env.timeout(ion.cpu.reserve(landed, copy) - env.now)
        if ion.cache is not None:
            yield from ion.cache.write(f, u, d, self.file_units)
        else:
            ring = r % self.rings if self.lock_handoff else None
            yield env.timeout(self.disk_transfer(d, nbytes, write=True, ring=ring) - env.now)
        if self.post:
            ion.cpu.reserve(env.now, self.post)
        if door is not None:
            door.release()
        yield env.timeout(self.lat)

    # -- one call ----------------------------------------------------------
    def _pieces(self, offset, nbytes):
        unit = self.unit
        u, end = offset // unit, offset + nbytes
        while offset < end:
            stop = min((u + 1) * unit, end)
            yield u, stop - offset
            offset, u = stop, u + 1

    def _all(self, gens):
        """Runs generators side by side; yields once all have finished."""
        env = self.env
        done = env.event()
        left = [len(gens)]

        def one(g):
            yield from g
            left[0] -= 1
            if left[0] == 0:
                done.succeed()

        for g in gens:
            env.process(one(g))
        yield done

    # -- two-phase collective I/O (two_phase.py, exchange.py) ----------------
    def _aggregator_proc(self, a, done):
        env = self.env
        write = self.op == "write"
        if not write and self.aggregator_read_latency and self.two_phase[a]:
            yield env.timeout(self.aggregator_read_latency)
        costs = self.buffers
        for buf in self.two_phase[a]:
            disk = self.disk_of(0, buf["start"] // self.unit)
            if write:
                yield env.timeout(self.cpu(env.now, costs.work(a, buf, "write")) - env.now)
                yield env.timeout(costs.transfer(disk, buf["extent"], True) - env.now)
            else:
                yield env.timeout(costs.transfer(disk, buf["extent"], False) - env.now)
                yield env.timeout(self.cpu(env.now, costs.work(a, buf, "read")) - env.now)
            wait = costs.handover(self.op)  # ranks above the cores: the next step waits (exchange.py)
            if wait:
                yield env.timeout(wait)
        done[0] -= 1
        if done[0] == 0:
            done[1].succeed()

    def _two_phase_rank(self, r, op, rec, done):
        """A rank's one collective call: open, the call's own cost, then
        the aggregators' work, which every rank's call waits for."""
        env = self.env
        opened = (self.machine["file.open_close_write" if op == "write" else "file.open_close_read"]
                  + self.library_open)
        yield env.timeout(opened)
        t_open = env.now
        if self.collective_cost and self.collective_cost[op]:
            yield env.timeout(self.cpu(env.now, self.collective_cost[op]) - env.now)
        if not done[1].triggered:
            yield done[1]
        rec[r].update(open_seconds=opened, io_first_seconds=t_open, io_seconds=env.now - t_open,
                      close_seconds=0.0, fsync_seconds=0.0, total_seconds=env.now,
                      io_last_seconds=env.now)

    def _call(self, r, offset, nbytes, piece):
        env = self.env
        f = self.file_of(r)
        if self.call_overhead:
            yield env.timeout(self.call_overhead)
        if self.collective_cost:
            cost = self.collective_cost[self.op]
            if cost:
                yield env.timeout(self.cpu(env.now, cost) - env.now)
        agent = self.agents[r % self.n_agents] if self.n_agents else None
        if agent is not None:
            yield agent.acquire()
        began = env.now  # the call's own time, without waiting for its agent
        if agent is not None:
            # the RPC, and the copy through the agent's own buffer if it has
            # one; a collective aggregator also receives (or sends) the data
            # of a rank that is not itself as an MPI message
            work = nbytes / self.agent_copy if self.agent_copy else 0.0
            if self.aggregating and r >= self.n_agents and self.message_rate:
                work += self.message_overhead + nbytes / self.message_rate
            rpc_end = env.now + self.machine["agent.overhead"]
            end = self.cpu(rpc_end, work) if work else rpc_end
            yield env.timeout(end - env.now)
            if not self.sync:
                agent.release()
        token = self.file_token if self.file_token_needed else None
        if token is not None:
            yield token.acquire()
        if self.lock_cost:
            yield env.timeout(self.cpu(env.now, self.lock_cost) - env.now)
        # host.page_cache is a size: a call larger than the whole cache is
        # never in it, so it reads the disk as with no cache
        cache = (self.page_cache if self.op == "read" and self.page_cache is not None
                 and nbytes <= self.page_cache.capacity else None)
        key = None
        if cache is not None:
            key = cache.key(f, offset)
            state = cache.entries.get(key)
            if state is None:  # a miss: this call reads the bytes from the disk
                cache.misses += 1
                cache.entries[key] = env.event()
                if offset < self.in_step_reach:
                    # readers in step: the other readers copy the last
                    # window before this one is read
                    copies = cache.expect_copies(f, key, self.sharers - 1, env.event())
                    if copies is not None:
                        cache.in_step_waits += 1
                        yield copies
            else:
                if state is not READY:  # another rank's read of them is in flight
                    cache.waits += 1
                    yield state
                cache.hits += 1
                if key in cache.entries:
                    cache.entries.move_to_end(key)
                copy = self.cached_read_overhead + nbytes / self.cached_read_rate
                yield env.timeout(self.cpu(env.now, copy) - env.now)
                cache.copied(key)
                cache = None
                key = False  # served from the page cache
        if key is not False:
            pieces = list(self._pieces(offset, nbytes))
            window = self.outstanding or len(pieces)
            if window == 1 or len(pieces) == 1:
                for u, n in pieces:
                    yield from piece(r, f, u, n)
            else:
                for i in range(0, len(pieces), window):
                    yield from self._all([piece(r, f, u, n) for u, n in pieces[i:i + window]])
            if cache is not None:
                cache.arrived(key, nbytes)
        if token is not None:
            token.release()
        if agent is not None and self.munix:
            extra = self.machine["agent.munix_overhead"] * (env.now - began)
            if extra:
                yield env.timeout(extra)
        if agent is not None and self.sync:
            agent.release()

    # -- ranks and groups ------------------------------------------------
    def _ranks_proc(self, members, op, rec):
        """One process per group (or per rank without grouping): the token
        visits the members in order, one call each, round after round."""
        env = self.env
        piece = self._write_piece if op == "write" else self._read_piece
        block = self.point.block
        opened = (self.machine["file.open_close_write" if op == "write" else "file.open_close_read"]
                  + self.library_open)
        yield env.timeout(opened)
        t_open = env.now
        first = {m: None for m in members}
        offsets = [self.offsets[m] for m in members]
        calls = len(offsets[0])
        # The token's visits: (member, call) in the order the ring makes them.
        if self.per_rank_grain:
            visits = ((i, k) for i in range(len(members)) for k in range(calls))
        else:
            visits = ((i, k) for k in range(calls) for i in range(len(members)))
        holder, handovers = None, 0
        for i, k in visits:
            m = members[i]
            if holder is not None and holder != m:
                if self.crowded:
                    # ranks above the cores: the next holder is switched in
                    # on a core, which that switch occupies
                    yield env.timeout(self.cpu(env.now, self.token_lat) - env.now)
                else:
                    yield env.timeout(self.token_lat)  # the token's message
                handovers += 1
            holder = m
            if first[m] is None:
                first[m] = env.now
                if op == "read" and self.read_latency:
                    yield env.timeout(self.read_latency - self.start_on_disk)
                    if self.start_on_disk:
                        d = self.disk_of(self.file_of(m), offsets[i][k] // self.unit)
                        yield env.timeout(self.disks[d].reserve(env.now, self.start_on_disk) - env.now)
            yield from self._call(m, offsets[i][k], block, piece)
            rec[m]["io_last_seconds"] = env.now
        # the longest ring's time in hand-overs, for the bound (explain.py)
        self.token_seconds = max(self.token_seconds, handovers * self.token_lat)
        for m in members:
            r = rec[m]
            r.update(open_seconds=opened, io_first_seconds=first[m] if first[m] is not None else t_open)
            end = r.get("io_last_seconds", t_open)
            synced = end
            if op == "write" and self.fsync:
                # fsync before close: the I/O nodes write back what this
                # rank's file still holds dirty, and the rank waits for it.
                synced = max([end] + [ion.cache.sync(self.file_of(m), self.file_units)
                                      for ion in self.io_nodes if ion.cache is not None])
            r.update(io_seconds=end - t_open, close_seconds=0.0, fsync_seconds=synced - end,
                     total_seconds=synced, io_last_seconds=end)
        if op == "write" and self.fsync and env.now < max(rec[m]["total_seconds"] for m in members):
            yield env.timeout(max(rec[m]["total_seconds"] for m in members) - env.now)

    def run_phase(self, op):
        """Simulates one phase; returns (seconds, bytes, rank records, counters)."""
        if op not in ("read", "write"):
            raise UsageError(f"phase '{op}' has no model: use write or read")
        if op == "write" and self.point.layout == "broadcast":
            raise UsageError("broadcast is a read-only layout: use phases read")
        env = self.env = self.env_factory()
        self.op = op
        m = self.machine
        self.race_left = self.race_seconds if op == "read" else 0.0
        for s in self._all_servers():
            s.free_at = 0.0
            s.busy = s.waited = 0.0
            s.jobs = 0
        for ion in self.io_nodes:
            ion.door = Resource(env, "door", m["io_node.max_outstanding"]) \
                if m["io_node.max_outstanding"] else None
            if ion.cache is not None:
                ion.cache.reset_counters()
        if self.page_cache is not None:
            self.page_cache.reset()  # evicted before every read phase (see page_cache.py)
        self.agents = [Resource(env, f"agent{a}") for a in range(self.n_agents)]
        self.file_token = Resource(env, "file_token")
        self.token_seconds = 0.0
        self.lock_ring, self.lock_handoffs = None, 0
        P = self.ranks
        rec = [{"rank": r, "start_seconds": 0.0, "bytes": 0} for r in range(P)]
        if self.rings:
            teams = [list(range(g, P, self.rings)) for g in range(self.rings)]
        else:
            teams = [[r] for r in range(P)]
        if self.two_phase is not None:
            done = [len(self.two_phase), env.event()]
            for a in range(len(self.two_phase)):
                env.process(self._aggregator_proc(a, done))
            for r in range(P):
                env.process(self._two_phase_rank(r, op, rec, done))
        else:
            for team in teams:
                env.process(self._ranks_proc(team, op, rec))
        env.run()
        for ion in self.io_nodes:
            if ion.cache is not None:
                ion.cache.settle()
        per_rank = [len(o) * self.point.block for o in self.offsets]
        for r in range(P):
            rec[r]["bytes"] = per_rank[r]
        seconds = max(r["total_seconds"] for r in rec)
        return seconds, sum(per_rank), rec, self._counters(seconds)

    def _all_servers(self):
        out = list(self.disks) + list(self.rank_links)
        for ion in self.io_nodes:
            out += ion.servers()
        if self.backplane is not None:
            out.append(self.backplane)
        if self.core_pool is not None:
            out += self.core_pool.servers
        return out

    def _counters(self, seconds):
        """Utilisation (busy time / phase time, max and mean over the
        instances of each kind of resource) and the caches' counters.
        Write-back still running after the last rank has finished counts
        into its disk's busy time, so a utilisation is capped at 1."""
        def util(busy):
            if not busy or seconds <= 0:
                return None
            u = [min(b / seconds, 1.0) for b in busy]
            return {"max": max(u), "mean": sum(u) / len(u)}

        out = {
            "seconds": seconds,
            "utilisation": {
                "disk": util([d.busy for d in self.disks[:self.stripes]]),
                "io_node": util([ion.cpu.busy for ion in self.io_nodes]),
                "io_link": util([ion.link.busy for ion in self.io_nodes if ion.link is not ion.cpu]),
                "rank_link": util([r.busy for r in self.rank_links]),
                "backplane": util([self.backplane.busy] if self.backplane else []),
                "agent": util([a.busy for a in self.agents]),
                "file_token": util([self.file_token.busy] if self.file_token_needed else []),
                "cpu": util([c.busy for c in self.core_pool.servers] if self.core_pool else []),
            },
            "agents": self.n_agents,
            "disk_transfers": sum(d.jobs for d in self.disks),
        }
        if self.token_seconds:
            out["token_handover_seconds"] = self.token_seconds
            out["token_latency_key"] = ("network.token_latency_crowded" if self.crowded
                                        else "network.token_latency")
        if self.lock_handoffs:
            out["write_lock_handoffs"] = self.lock_handoffs
            out["write_lock_handoff_seconds"] = self.lock_handoffs * self.lock_handoff
        if self.op == "write":
            out["disk_write_rate"] = self.write_rate_key
        if self.op == "read":
            out["disk_read_rate"] = self.read_rate_key
            if self.race_seconds:
                out["read_race_seconds"] = self.race_seconds
                out["read_race_key"] = self.race_key
                if self.race_key == "disk.share_race_restarts":
                    out["read_race_share"] = self.share
            if self.two_phase is None and self.read_latency:
                out["read_start_seconds"] = self.read_latency
                if self.start_on_disk:
                    out["read_start_window_on_disk_seconds"] = self.start_on_disk
                if self.machine["disk.read_ahead"]:  # the first window the start waits for
                    out["read_start_window"] = read_start.first_window(self.point.block,
                                                                       self.machine["disk.read_ahead"])
        if self.two_phase is not None:
            out["collective_buffers"] = self.buffers.counters(self.two_phase, self.op)
        caches = [ion.cache for ion in self.io_nodes if ion.cache is not None]
        if caches:
            total = {}
            for c in caches:
                for k, v in c.counters().items():
                    total[k] = total.get(k, 0) + v
            out["cache"] = total
        if self.page_cache is not None and self.op == "read":
            out["page_cache"] = self.page_cache.counters()
        return out
