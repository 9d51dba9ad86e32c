"""A test server on real loopback HTTP: uvicorn serving an ASGI app on a free 127.0.0.1 port in a daemon
thread, usable from sync benches and async tests alike (the fake WeChat API and the fake LLM run on it)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class LoopbackServer:
    def __init__(self, app: Any, name: str) -> None:
        self._app, self._name = app, name
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self) -> int:
        """Serve and wait until uvicorn is accepting; returns the port."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app, log_level="warning", lifespan="off", ws="none",
                                timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        for _ in range(500):
            if self._server.started:
                return self.port
            time.sleep(0.01)  # startup of a real server in another thread: polled, not a test's clock
        raise RuntimeError(f"{self._name} did not start")

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
