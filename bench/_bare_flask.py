"""The baseline of the benchmarks: a bare Flask endpoint served by waitress like `serve` does."""

from __future__ import annotations

import sys

from flask import Flask, jsonify
from waitress.server import create_server


def make_app() -> Flask:
    app = Flask(__name__)

    @app.get("/ping")
    def ping() -> object:
        return jsonify({"ok": True})

    @app.post("/ping")
    def ping_post() -> object:
        return jsonify({"ok": True})

    return app


if __name__ == "__main__":
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    if "--pydantic" in sys.argv:  # the start-up floor of an app validating with pydantic
        from pydantic import BaseModel

        class Body(BaseModel):
            amount: int

        Body.model_validate({"amount": 1})
    server = create_server(make_app(), host="127.0.0.1", port=0, threads=threads)
    print(f"control_url http://127.0.0.1:{server.effective_port}/_sandbox", flush=True)
    print("Ready", flush=True)
    server.run()
