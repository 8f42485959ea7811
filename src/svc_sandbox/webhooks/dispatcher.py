"""The dispatcher: sends due webhook attempts over HTTP, outside the sandbox lock.

It is a ``Sandbox.after_work`` hook. After due work ran on an explicit call (advance, set,
run-due, flush) it sends every due attempt in the calling thread, one at a time in due-time
order, so a frozen-clock test can assert right after the call returns. After the real or scaled
clock's ticker ran due work (``background=True``) it wakes its sender threads instead, so
neither the ticker nor any API request waits for a receiver. Up to ``webhook_senders`` of them
send at once, one attempt at a time per receiver (per lane: the URL's origin), in due order: a
receiver that hangs, or sits in a debugger, holds up its own deliveries only, not every other
organization's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from svc_sandbox.webhooks.delivery import Attempt, DeliveryService, Lane, Outgoing
from svc_sandbox.webhooks.sender import Outcome, Sender

#: How long stopping waits for the attempts out (each ends by its own timeout).
STOP_WAIT_SECONDS = 30.0


class Dispatcher:
    def __init__(self, deliveries: DeliveryService, senders: int = 1) -> None:
        self.deliveries = deliveries
        #: Keep-alive connections per receiver, and the in-process receivers.
        endpoints = deliveries.endpoints
        self.sender = Sender(lambda url: endpoints.receivers.get(url))
        deliveries.endpoints.urls_in_use.append(self.sender.keep_only)
        #: One explicit flush at a time: attempts go out one by one, in due-time order.
        self._sending = threading.Lock()
        #: ``active`` while this thread sends an attempt (an in-process receiver runs in it).
        self._delivering = threading.local()
        self._stop = threading.Event()
        #: The background senders of a flowing clock (up to ``senders`` threads).
        self.background = _Senders(deliveries, self._send, senders, self._stop)

    # --- the after_work hook ----------------------------------------------------------------

    def pending(self) -> bool:
        """True while some attempt is due and not yet sent."""
        return self.deliveries.has_waiting()

    def __call__(self, background: bool = False) -> None:
        if not background:
            self.flush()
        elif not self._stop.is_set() and self.deliveries.has_waiting(self.background.busy()):
            self.background.nudge()

    def start(self) -> None:
        """The background senders may send again (after ``stop``)."""
        self._stop.clear()

    def delivering(self) -> bool:
        """Whether this thread is sending an attempt: a call made here comes from an
        in-process receiver, inside its own delivery."""
        return getattr(self._delivering, "active", False)

    def flushing(self) -> bool:
        """Whether an explicit flush (of an advance, set, run-due or flush) is under way: it
        sends one attempt at a time, or waits for the background senders' attempts out, so a
        receiver calling the sandbox over HTTP from inside its delivery may be what it waits
        for (``Sandbox._walking``)."""
        return self._sending.locked()

    # --- sending ----------------------------------------------------------------------------

    def flush(self) -> list[Attempt]:
        """Sends every attempt due as it begins, in due-time order; returns the attempts made
        (after the background senders' attempts out are answered: none goes out meanwhile)."""
        made: list[Attempt] = []
        with self._sending, self.background.paused():
            # Only what was due as it began: a request meanwhile (a delayed one moving a
            # frozen clock) may make more due, which the caller's next round sends.
            newest = self.deliveries.last_due_seq
            outgoing = self.deliveries.take_next(newest=newest)
            while outgoing is not None:
                if self._stop.is_set():
                    # Stopping (serve got SIGTERM): on a flowing clock retries keep falling
                    # due, and draining them held the process up for minutes; an advance
                    # going on made one more attempt per flush it called. What is left stays
                    # due, and an export keeps it.
                    self.deliveries.put_back(outgoing)
                    break
                attempt, outgoing = self.deliveries.record_and_take_next(
                    outgoing, self._send(outgoing), newest
                )
                if attempt is not None:
                    made.append(attempt)
        return made

    def _send(self, outgoing: Outgoing) -> Outcome:
        if not outgoing.send and outgoing.forced is not None:
            return outgoing.forced
        self._delivering.active = True
        try:
            outcome = self.sender.post(
                outgoing.url, outgoing.body, outgoing.headers, outgoing.timeout
            )
        except Exception as exc:  # a receiver must never crash the sandbox
            outcome = Outcome(None, "connection_error", f"{type(exc).__name__}: {exc}")
        finally:
            self._delivering.active = False
        if outgoing.forced is None:
            return outcome
        forced = outgoing.forced
        return Outcome(
            outcome.status_code,
            forced.error,
            f"{forced.message} (receiver: {outcome.message})",
            outcome.duration_ms,
            outcome.snippet,
        )

    def stop(self) -> None:
        """Stops the senders, and any flush, after the attempts they are sending, if any."""
        self._stop.set()
        self.background.stop()
        with self._sending:
            self.sender.close()


class _Senders:
    """The background senders: threads that each take the earliest due attempt whose
    receiver has none out (``DeliveryService.take_next(busy)``), send it, record it and take
    the next, so a receiver answering fast costs no hand-over between threads. Started as
    attempts need them, up to ``count``; daemons, so a receiver that hangs does not hold up
    the interpreter's exit."""

    def __init__(
        self,
        deliveries: DeliveryService,
        send: Callable[[Outgoing], Outcome],
        count: int,
        stopping: threading.Event,
    ) -> None:
        self._deliveries = deliveries
        self._send = send
        self._count = count
        self._stopping = stopping
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []
        #: The lanes with an attempt out, and how many attempts are out.
        self._busy: set[Lane] = set()
        self._out = 0
        #: Threads waiting for work, and flushes under way (they send on their own).
        self._idle = 0
        self._paused = 0

    def busy(self) -> frozenset[Lane]:
        """The lanes with an attempt out now."""
        with self._changed:
            return frozenset(self._busy)

    def nudge(self) -> None:
        """Attempts fell due: an idle sender looks for them, or a new one starts (not while
        stopping: a thread started then would end at once and keep its place)."""
        with self._changed:
            if self._stopping.is_set():
                return
            if self._idle:
                self._changed.notify()
                return
            self._threads = [thread for thread in self._threads if thread.is_alive()]
            if len(self._threads) < self._count:
                thread = threading.Thread(
                    target=self._run, name=f"svc-sandbox-webhooks-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _run(self) -> None:
        while True:
            with self._changed:
                outgoing = self._take()
            if outgoing is None:
                return
            try:
                self._deliveries.record(outgoing, self._send(outgoing))
            finally:
                with self._changed:
                    self._release(outgoing)

    def _take(self) -> Outgoing | None:
        """The next attempt this thread sends, waiting for one; None when stopping."""
        while not self._stopping.is_set():
            if not self._paused:
                outgoing = self._deliveries.take_next(self._busy)
                if outgoing is not None:
                    self._out += 1
                    if (lane := outgoing.lane) is not None:
                        self._busy.add(lane)
                    return outgoing
            self._idle += 1
            self._changed.wait()
            self._idle -= 1
        return None

    def _release(self, done: Outgoing) -> None:
        self._out -= 1
        if (lane := done.lane) is not None:
            self._busy.discard(lane)
        if self._paused or self._stopping.is_set():
            self._changed.notify_all()  # a flush or stop waits for the attempts out

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No attempt goes out of here meanwhile (a flush sends on its own); waits for the
        ones out first."""
        with self._changed:
            self._paused += 1
        try:
            with self._changed:
                self._changed.wait_for(lambda: self._out == 0)
            yield
        finally:
            with self._changed:
                self._paused -= 1
                self._changed.notify_all()

    def stop(self) -> None:
        """Lets every thread end after the attempt it is sending, waiting for those."""
        with self._changed:
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._out == 0, timeout=STOP_WAIT_SECONDS)
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout=STOP_WAIT_SECONDS)
