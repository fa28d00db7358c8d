"""An I/O node's block cache: LRU replacement, prefetch, read-ahead and
write-behind, as the CFS report describes its I/O nodes (section 3.0 and
6.3): a read miss brings in the missed block and the next blocks of the
same disk as one transfer; writes wait in the cache and go to disk as
groups of contiguous blocks; when the cache is full, the least recently
used clean block makes room, read or not (which is what thrashes when too
many readers prefetch at once).

Blocks are keyed by (file, stripe unit).  Stripe unit u of a file lives on
disk (file + u) mod stripe.count at that disk's position u // stripe.count,
so the blocks contiguous on a disk are u, u + count, u + 2 count, ..."""

from collections import OrderedDict, deque

PENDING, CLEAN, DIRTY, FLUSHING = range(4)
FILE_SHIFT = 40


class Entry:
    __slots__ = ("state", "ready", "trigger", "used", "redirty", "phase")

    def __init__(self, state, phase, ready=None):
        self.state = state
        self.ready = ready
        self.trigger = -1
        self.used = False
        self.redirty = False
        self.phase = phase  # the phase that brought the block in


class BlockCache:
    def __init__(self, sim, node):
        m = sim.machine
        self.sim = sim
        self.node = node
        self.capacity = m["io_node.cache"] // m["io_node.cache_block"]
        self.block = m["io_node.cache_block"]
        self.prefetch = m["io_node.prefetch"]
        self.readahead_at = m["io_node.readahead_at"]
        self.write_group = m["io_node.write_group"]
        self.stride = m["stripe.count"]
        self.entries = {}
        self.clean = OrderedDict()  # evictable blocks, least recently used first
        self.dirty = OrderedDict()  # dirty blocks, oldest first
        self.flushing = 0
        self.flush_end = 0.0  # when the last write-back issued so far ends
        self.slot_waiters = deque()
        self.reset_counters()

    def reset_counters(self):
        """A phase begins: its counters start at 0, and the blocks already
        here were left by an earlier phase (a write's data, or the previous
        trial's reads): an I/O node's cache is the server's, which the
        clients' eviction before a read does not empty."""
        self.phase = getattr(self, "phase", -1) + 1
        self.carried_hits = 0
        self.hits = self.misses = self.pending_waits = 0
        self.disk_reads = self.blocks_read = self.readaheads = self.wasted = 0
        self.flushes = self.blocks_flushed = self.slot_waits = 0

    # -- slots -----------------------------------------------------------
    def _free_slots(self, wanted):
        """Makes up to `wanted` slots free by evicting clean LRU blocks."""
        free = self.capacity - len(self.entries)
        clean, entries = self.clean, self.entries
        while free < wanted and clean:
            key, e = clean.popitem(last=False)
            del entries[key]
            if not e.used:
                self.wasted += 1
            free += 1
        return min(free, wanted)

    def _wake_slot_waiters(self, freed):
        """`freed` blocks became evictable: wake that many waiters, oldest
        first (waking all of them would have each retry in vain)."""
        waiters = self.slot_waiters
        for _ in range(min(freed, len(waiters))):
            waiters.popleft().succeed()

    def _wait_slot(self, again=False):
        """An event for a free slot; a waiter woken in vain keeps its turn."""
        if not again:
            self.slot_waits += 1
        ev = self.sim.env.event()
        if again:
            self.slot_waiters.appendleft(ev)
        else:
            self.slot_waiters.append(ev)
        return ev

    # -- reads -----------------------------------------------------------
    def _fetch_run(self, f, u, disk, file_units):
        """Reads u and the next blocks of its disk as one transfer; returns
        how many blocks it could make room for (0: none, caller waits)."""
        base = f << FILE_SHIFT
        keys = []
        uu = u
        entries = self.entries
        while len(keys) < self.prefetch and uu < file_units and (base | uu) not in entries:
            keys.append(base | uu)
            uu += self.stride
        n = self._free_slots(len(keys))
        if n == 0:
            return 0
        keys = keys[:n]
        ready = self.sim.env.event()
        run = []
        for key in keys:
            e = Entry(PENDING, self.phase, ready)
            entries[key] = e
            run.append(e)
        if self.readahead_at:  # a run cut short still carries the stream on
            run[min(self.readahead_at, n) - 1].trigger = u + n * self.stride
        self.disk_reads += 1
        self.blocks_read += n
        done = self.sim.disk_transfer(disk, n * self.block)
        self.sim.env.process(self._arrive(done, keys, run, ready))
        return n

    def _arrive(self, done, keys, run, ready):
        env = self.sim.env
        yield env.timeout(done - env.now)
        for key, e in zip(keys, run):
            if e.state == PENDING:
                e.state = CLEAN
                e.ready = None
                self.clean[key] = e
        ready.succeed()
        self._wake_slot_waiters(len(run))

    def hit(self, key, e, f, disk, file_units):
        """A request found its block here, ready."""
        self.hits += 1
        if e.phase != self.phase:
            self.carried_hits += 1
        self._touch(key, e, f, disk, file_units)

    def _touch(self, key, e, f, disk, file_units):
        if e.state == CLEAN:
            self.clean.move_to_end(key)
        e.used = True
        if e.trigger >= 0:
            nxt, e.trigger = e.trigger, -1
            # Blocks already there (kept from before) are stepped over, so
            # the stream's read-ahead goes on after them.
            base, entries = f << FILE_SHIFT, self.entries
            for _ in range(self.prefetch):
                if nxt >= file_units or (base | nxt) not in entries:
                    break
                nxt += self.stride
            if nxt < file_units and (base | nxt) not in entries:
                self.readaheads += 1
                self._fetch_run(f, nxt, disk, file_units)

    def read(self, f, u, disk, file_units):
        """A generator: returns when block u of file f is in the cache."""
        key = (f << FILE_SHIFT) | u
        counted = waited = False
        while True:
            e = self.entries.get(key)
            if e is None:
                if not counted:
                    self.misses += 1
                    counted = True
                if self._fetch_run(f, u, disk, file_units) == 0:
                    yield self._wait_slot(again=waited)
                    waited = True
                continue
            if e.state == PENDING:
                if not counted:
                    self.pending_waits += 1
                    counted = True
                yield e.ready
                continue
            if not counted:
                self.hit(key, e, f, disk, file_units)
            else:
                self._touch(key, e, f, disk, file_units)
            return

    # -- writes ----------------------------------------------------------
    def _group_members(self, f, u, file_units):
        """The blocks of u's write group: write_group blocks contiguous on
        u's disk, aligned on the disk."""
        stride, w = self.stride, self.write_group
        first_local = (u // stride) // w * w
        col = u % stride
        base = f << FILE_SHIFT
        out = []
        for local in range(first_local, first_local + w):
            uu = local * stride + col
            if uu >= file_units:
                break
            out.append(base | uu)
        return out

    def _flush(self, keys, disk):
        entries = self.entries
        for key in keys:
            e = entries[key]
            e.state = FLUSHING
            del self.dirty[key]
        self.flushing += len(keys)
        self.flushes += 1
        self.blocks_flushed += len(keys)
        done = self.sim.disk_transfer(disk, len(keys) * self.block, write=True)
        self.flush_end = max(self.flush_end, done)
        self.sim.env.process(self._flushed(done, keys))

    def _flushed(self, done, keys):
        env = self.sim.env
        yield env.timeout(done - env.now)
        for key in keys:
            e = self.entries[key]
            if e.redirty:
                e.redirty = False
                e.state = DIRTY
                self.dirty[key] = e
            else:
                e.state = CLEAN
                e.used = True
                self.clean[key] = e
        self.flushing -= len(keys)
        self._wake_slot_waiters(len(keys))
        # Writers still waiting would otherwise sleep with nothing in flight
        # to wake them: write back the next oldest group now.
        if self.slot_waiters and self.flushing == 0 and self.dirty:
            self._flush_oldest(self.sim.file_units)

    def _flush_oldest(self, file_units):
        """The cache is full of dirty blocks: write back the oldest dirty
        block with the dirty blocks of its group."""
        key = next(iter(self.dirty))
        f, u = key >> FILE_SHIFT, key & ((1 << FILE_SHIFT) - 1)
        members = [k for k in self._group_members(f, u, file_units)
                   if (e := self.entries.get(k)) is not None and e.state == DIRTY]
        self._flush(members, self.sim.disk_of(f, u))

    def write(self, f, u, disk, file_units):
        """A generator: returns when block u of file f is dirty in the cache."""
        key = (f << FILE_SHIFT) | u
        waited = False
        while True:
            e = self.entries.get(key)
            if e is None:
                if self._free_slots(1) == 0:
                    if self.dirty and self.flushing == 0:
                        self._flush_oldest(file_units)
                    yield self._wait_slot(again=waited)
                    waited = True
                    continue
                e = Entry(DIRTY, self.phase)
                self.entries[key] = e
                self.dirty[key] = e
            elif e.state == PENDING:
                yield e.ready
                continue
            elif e.state == CLEAN:
                del self.clean[key]
                e.state = DIRTY
                self.dirty[key] = e
            elif e.state == FLUSHING:
                e.redirty = True
            break
        members = self._group_members(u=u, f=f, file_units=file_units)
        entries = self.entries
        if all((m := entries.get(k)) is not None and m.state == DIRTY for k in members):
            self._flush(members, disk)

    def sync(self, f, file_units):
        """fsync of file f: writes back every dirty block of it now (in
        write groups) and returns when the last write-back ends."""
        shift_f = f << FILE_SHIFT
        mine = [k for k in self.dirty if k >> FILE_SHIFT == f]
        while mine:
            k = mine[0]
            u = k - shift_f
            members = [m for m in self._group_members(f, u, file_units)
                       if (e := self.entries.get(m)) is not None and e.state == DIRTY]
            self._flush(members, self.sim.disk_of(f, u))
            done = set(members)
            mine = [m for m in mine if m not in done]
        return self.flush_end

    # -- between phases --------------------------------------------------
    def settle(self):
        """End of a phase: what is still dirty is written back before the
        next phase starts, outside any timed region (the CFS report's test
        closes its file without a flush)."""
        for key, e in list(self.entries.items()):
            if e.state in (DIRTY, FLUSHING):
                e.state = CLEAN
                e.redirty = False
                self.clean[key] = e
        self.dirty.clear()
        self.flushing = 0
        self.flush_end = 0.0
        self.slot_waiters = deque()

    def counters(self):
        return {"hits": self.hits, "misses": self.misses, "waits_on_disk": self.pending_waits,
                "hits_left_by_earlier_phase": self.carried_hits,
                "disk_reads": self.disk_reads, "blocks_read": self.blocks_read,
                "readaheads": self.readaheads, "prefetched_unused": self.wasted,
                "write_backs": self.flushes, "blocks_written_back": self.blocks_flushed,
                "waits_for_room": self.slot_waits}
