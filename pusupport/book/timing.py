"""Time told before and during a build: a projection from earlier page times, scaled by
this CPU's speed against the machine that measured them; a :class:`Progress` line after each
page and, from a :class:`Heartbeat`, at least once a minute in between.

The speed is a probe of a few seconds: a 512 × 512 matmul on one thread in float32 and
under bf16 autocast, each machine taken at the precision its pages run in (bf16 where the CPU
has native bf16 instructions, else float32: :func:`~pusupport.core.runtime.bf16_default`).
Pages spend their time in small networks' steps, so the ratio is a rough guide, stated as such.
"""
from __future__ import annotations

import threading
import time


def probe(seconds: float = 1.0) -> dict:
    """{"float32": GFLOP/s, "bf16": GFLOP/s, "runs": the precision pages run in here} of a
    512 × 512 matmul on one thread, each timed for about ``seconds``."""
    import torch
    from ..core.runtime import bf16_default
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    a = torch.randn(512, 512)
    rates = {}
    try:
        for name, bf16 in (("float32", False), ("bf16", True)):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                a @ a                                      # warm-up
                n, start = 0, time.perf_counter()
                while time.perf_counter() - start < seconds:
                    a @ a
                    n += 1
            rates[name] = round(n * 2 * 512 ** 3 / (time.perf_counter() - start) / 1e9, 1)
    finally:
        torch.set_num_threads(threads)
    rates["runs"] = "bf16" if bf16_default(torch.device("cpu"))[0] else "float32"
    return rates


def slower(here: dict, there: dict) -> float:
    """How many times slower this machine (``here``, a :func:`probe`) runs pages than the
    one that measured ``there``, each at the precision its pages run in."""
    return there[there["runs"]] / here[here["runs"]]


def _pages(n: int) -> str:
    """"1 page", "2 pages"."""
    return f"{n} page{'' if n == 1 else 's'}"


def projection(times: dict, pages: list[str], workers: int, factor: float = 1.0) -> float:
    """Seconds the ``pages`` will take by earlier page ``times`` × ``factor``, ``workers``
    pages at a time (pages never timed count as nothing: the caller says how many)."""
    return sum(times.get(p, 0.0) for p in pages) * factor / workers


def projected(times: dict, pages: list[str], workers: int, factor: float, source: str) -> str:
    """The line a build starts with: about how long ``pages`` take, and from what."""
    known = [p for p in pages if p in times]
    if not known:
        return f"projected: no earlier page times for {_pages(len(pages))}"
    untimed = len(pages) - len(known)
    return (f"projected: about {minutes(projection(times, known, workers, factor))} for "
            f"{_pages(len(pages))}, {workers} at a time, by {source}"
            + (f" ({_pages(untimed)} not timed before)" if untimed else ""))


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


class Heartbeat:
    """A line from ``say(elapsed seconds)`` every ``every`` seconds, in a thread, while the
    ``with`` block runs."""

    def __init__(self, say, every: float = 60.0):
        self.say, self.every = say, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self):
        start = time.perf_counter()
        while not self._stop.wait(self.every):
            print(self.say(time.perf_counter() - start), flush=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class Progress:
    """The console line after each page: pages done, the page, what is left and, from
    earlier page times (× ``factor``: this machine against the one that timed them, then
    × how much longer the pages ended so far took than those times said), about how long
    (the left pages' times over the workers); :meth:`beat`, the line in between. Pages
    ``reading`` the committed runs count by ``read_times`` (seconds a page took to read its
    runs, as measured; neither scaled nor setting the pace), not by their earlier times, those
    of a build that trained them; one without a read time is left out, and the line says so."""

    def __init__(self, total: int, done: int, later: list, earlier: dict, workers: int,
                 factor: float = 1.0, reading=(), read_times: dict | None = None):
        self.total, self.done, self.later, self.workers = total, done, later, workers
        self.reading = set(reading)             # their earlier times were spent training
        self.read_times = {p: t for p, t in (read_times or {}).items() if p in self.reading}
        self.earlier = {p: t for p, t in earlier.items() if p not in self.reading}
        self.factor, self.running, self.left = factor, [], list(later)
        self.since, self.took, self.said = time.perf_counter(), 0.0, 0.0

    def __call__(self, page: str, seconds: float | None, left: list) -> str:
        self.done += 1
        if seconds is not None and page in self.earlier:  # how far this build runs from the times
            self.took, self.said = self.took + seconds, self.said + self.earlier[page] * self.factor
        self.running = left[:self.workers]               # Ray starts a wave's tasks in order
        self.left, self.since = [*left, *self.later], time.perf_counter()
        said = f"[{self.done}/{self.total}] {page}: " + (f"{seconds:.0f} s" if seconds is not None
                                                           else "failed")
        if not self.left:
            return said
        queued = len(self.left) - len(self.running)
        said += (f"; running: {', '.join(self.running)}" if self.running else "") + (
            f"; {queued} more queued" if queued else "")
        return f"{said}; {self._estimate(0.0)}"

    def beat(self, elapsed: float) -> str:
        """The line while pages run: how long the build has run, what runs, what is left."""
        since = time.perf_counter() - self.since
        return (f"  … {minutes(elapsed)} in, {self.done}/{self.total} pages done, running: "
                f"{', '.join(self.running) or '—'} ({minutes(since)} since "
                f"{'the last page ended' if self.done else 'the start'}); "
                f"{self._estimate(since)}")

    def _estimate(self, spent: float) -> str:
        """About how long the pages left take, less ``spent`` on those of them running."""
        left = self.left or self.running
        known = [p for p in left if p in self.earlier]
        read = [p for p in left if p in self.read_times]
        reading = sum(p in self.reading for p in left) - len(read)
        untimed = len(left) - len(known) - len(read) - reading
        apart = "; ".join([f"{_pages(reading)} reading committed runs"] * bool(reading)
                          + [f"{_pages(untimed)} not timed before"] * bool(untimed))
        apart = f" ({apart}, not counted)" if apart else ""
        if not known and not read:
            return f"no earlier page times{apart}"
        pace = self.took / self.said if self.said else 1.0
        counted = sum(p in self.earlier or p in self.read_times for p in self.running)  # ``spent`` counts
        seconds = (projection(self.earlier, known, self.workers, self.factor * pace)
                   + projection(self.read_times, read, self.workers) - spent * counted / self.workers)
        if seconds < 0:
            return f"{minutes(-seconds)} longer than earlier page times said: no estimate{apart}"
        return f"about {max(1, round(seconds / 60))} min left by earlier page times{apart}"
