"""The dispatcher: sends due webhook attempts over HTTP, outside the sandbox lock.

It is a ``Sandbox.after_work`` hook. After due work ran on an explicit call (advance, set,
run-due, flush) it sends every due attempt in the calling thread, one at a time in due-time
order, so a frozen-clock test can assert right after the call returns. After the real or scaled
clock's ticker ran due work (``background=True``) it wakes its own worker thread instead, so
neither the ticker nor any API request waits for a receiver.
"""

from __future__ import annotations

import threading

from svc_sandbox.webhooks.delivery import Attempt, DeliveryService, Outgoing
from svc_sandbox.webhooks.sender import Outcome, Sender


class Dispatcher:
    def __init__(self, deliveries: DeliveryService) -> None:
        self.deliveries = deliveries
        #: Keep-alive connections per receiver, and the in-process receivers.
        endpoints = deliveries.endpoints
        self.sender = Sender(lambda url: endpoints.receivers.get(url))
        deliveries.endpoints.urls_in_use.append(self.sender.keep_only)
        #: One sender at a time: attempts go out one by one, in due-time order.
        self._sending = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self._worker_guard = threading.Lock()

    # --- the after_work hook ----------------------------------------------------------------

    def pending(self) -> bool:
        """True while some attempt is due and not yet sent."""
        return self.deliveries.has_due()

    def __call__(self, background: bool = False) -> None:
        if background:
            self._start_worker()
            self._wake.set()
        else:
            self.flush()

    # --- sending ----------------------------------------------------------------------------

    def flush(self) -> list[Attempt]:
        """Sends every due attempt now, in due-time order; returns the attempts made."""
        made: list[Attempt] = []
        with self._sending:
            outgoing = self.deliveries.take_next()
            while outgoing is not None:
                attempt, outgoing = self.deliveries.record_and_take_next(
                    outgoing, self._send(outgoing)
                )
                if attempt is not None:
                    made.append(attempt)
                if outgoing is not None and self._stop.is_set():
                    # Stopping (serve got SIGTERM): on a flowing clock retries keep falling
                    # due, and draining them held the process up for minutes. What is left
                    # stays due, and an export keeps it.
                    self.deliveries.put_back(outgoing)
                    break
        return made

    def _send(self, outgoing: Outgoing) -> Outcome:
        if not outgoing.send and outgoing.forced is not None:
            return outgoing.forced
        try:
            outcome = self.sender.post(
                outgoing.url, outgoing.body, outgoing.headers, outgoing.timeout
            )
        except Exception as exc:  # a receiver must never crash the sandbox
            outcome = Outcome(None, "connection_error", f"{type(exc).__name__}: {exc}")
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

    # --- the background worker (real and scaled clocks) -------------------------------------

    def _start_worker(self) -> None:
        with self._worker_guard:
            if self._worker is None or not self._worker.is_alive():
                self._stop.clear()
                self._worker = threading.Thread(
                    target=self._work, name="svc-sandbox-webhooks", daemon=True
                )
                self._worker.start()

    def _work(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            self.flush()

    def stop(self) -> None:
        """Stops the worker, and any flush, after the attempt it is sending, if any."""
        with self._worker_guard:
            worker, self._worker = self._worker, None
        self._stop.set()
        self._wake.set()
        if worker is not None:
            worker.join(timeout=30)
        with self._sending:
            self.sender.close()
