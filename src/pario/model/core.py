"""A small discrete-event core: generator processes, timeouts, events.

It offers exactly the part of SimPy's interface the model uses
(``env.now``, ``env.timeout(d)``, ``env.event()``, ``ev.succeed(v)``,
``ev.triggered``, ``env.process(gen)``, ``env.run()``), so the model runs on
either; ``bench/model_speed.py`` runs both side by side (see the package
docstring for the outcome).  What makes it cheaper than SimPy: a timeout is
one heap entry that resumes its process directly (no event object with a
callback list), and an event resumes its waiters in one scheduled step.

Two helpers the model builds on, both written against that interface:

* ``Server``: a first-come first-served single server whose service time is
  known when a job arrives (a disk transfer, a copy, a message on a link).
  Then a job's completion is ``max(arrival, free_at) + service`` and no
  queue object is needed: one timeout per job.  It keeps the busy time and
  the waiting time the explanations are made from.
* ``Resource``: a capacity-N lock held for a time not known in advance (a
  service agent serving a synchronous call, a shared file's token).
"""

import heapq
from itertools import count


class Event:
    """Something that happens once; processes that yield it wait for it."""

    __slots__ = ("env", "waiters", "triggered", "value")

    def __init__(self, env):
        self.env = env
        self.waiters = []
        self.triggered = False
        self.value = None

    def succeed(self, value=None):
        if self.triggered:
            raise RuntimeError("event triggered twice")
        self.triggered = True
        self.value = value
        if self.waiters:
            self.env._schedule(0.0, self._wake, None)
        return self

    def _wake(self, _):
        waiters, self.waiters = self.waiters, []
        for resume in waiters:
            resume(self.value)


class Timeout:
    __slots__ = ("delay",)

    def __init__(self, delay):
        self.delay = delay


class Process(Event):
    """Runs a generator; is itself an event that triggers when it returns."""

    __slots__ = ("gen",)

    def __init__(self, env, gen):
        super().__init__(env)
        self.gen = gen
        env._schedule(0.0, self._resume, None)

    def _resume(self, value):
        env = self.env
        try:
            target = self.gen.send(value)
        except StopIteration as stop:
            self.succeed(stop.value)
            return
        if type(target) is Timeout:
            env._schedule(target.delay, self._resume, None)
        elif target.triggered:
            env._schedule(0.0, self._resume, target.value)
        else:
            target.waiters.append(self._resume)


class Environment:
    def __init__(self):
        self.now = 0.0
        self._heap = []
        self._seq = count()

    def _schedule(self, delay, fn, arg):
        heapq.heappush(self._heap, (self.now + delay, next(self._seq), fn, arg))

    def timeout(self, delay):
        if delay < 0:
            raise ValueError(f"negative delay {delay}")
        return Timeout(delay)

    def event(self):
        return Event(self)

    def process(self, gen):
        return Process(self, gen)

    def run(self):
        heap, pop = self._heap, heapq.heappop
        while heap:
            t, _, fn, arg = pop(heap)
            self.now = t
            fn(arg)


class Server:
    """FIFO single server with service times known on arrival (see above)."""

    __slots__ = ("name", "free_at", "busy", "jobs", "waited")

    def __init__(self, name):
        self.name = name
        self.free_at = 0.0
        self.busy = 0.0
        self.jobs = 0
        self.waited = 0.0

    def reserve(self, arrival, service):
        """The completion time of a job arriving at `arrival` (>= now)."""
        start = arrival if arrival > self.free_at else self.free_at
        self.waited += start - arrival
        self.free_at = start + service
        self.busy += service
        self.jobs += 1
        return self.free_at

    def reset_clock(self):
        self.free_at = 0.0


class ServerPool:
    """n first-come first-served servers side by side (a host's cores): a
    job arriving now starts on the one that is free first."""

    __slots__ = ("servers",)

    def __init__(self, name, n):
        self.servers = [Server(f"{name}{i}") for i in range(n)]

    def reserve(self, arrival, service):
        first = self.servers[0]
        for s in self.servers:
            if s.free_at < first.free_at:
                first = s
        return first.reserve(arrival, service)


def reserve_together(servers, arrival, service):
    """One transfer that needs several servers at once (both ends of a
    message and the backplane): it starts when all are free, holds each for
    its own service time, and ends when the longest hold ends."""
    start = arrival
    for s, _ in zip(servers, service):
        if s.free_at > start:
            start = s.free_at
    end = start
    for s, d in zip(servers, service):
        s.waited += start - arrival
        s.free_at = start + d
        s.busy += d
        s.jobs += 1
        if s.free_at > end:
            end = s.free_at
    return end


class Resource:
    """A capacity-N lock held for a time not known in advance."""

    __slots__ = ("env", "name", "capacity", "users", "queue", "busy", "since", "jobs", "waited")

    def __init__(self, env, name, capacity=1):
        self.env = env
        self.name = name
        self.capacity = capacity
        self.users = 0
        self.queue = []
        self.busy = 0.0  # time with at least one holder, for utilisation
        self.since = 0.0
        self.jobs = 0
        self.waited = 0.0

    def acquire(self):
        ev = self.env.event()
        if self.users < self.capacity:
            self._grant(ev, self.env.now)
        else:
            self.queue.append((ev, self.env.now))
        return ev

    def _grant(self, ev, asked):
        now = self.env.now
        if self.users == 0:
            self.since = now
        self.users += 1
        self.jobs += 1
        self.waited += now - asked
        ev.succeed()

    def release(self):
        self.users -= 1
        if self.users == 0:
            self.busy += self.env.now - self.since
        if self.queue:
            self._grant(*self.queue.pop(0))
