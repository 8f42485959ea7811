"""Files the commands write (state exports, reports, recorded scenarios): the folders on the
way are made, and the file appears whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path


def write_file(path: str | Path, data: bytes | str) -> None:
    """Writes ``data`` to ``path``, making its missing parent folders; raises OSError."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    encoded = data.encode("utf-8") if isinstance(data, str) else data
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as out:
        out.write(encoded)
    os.replace(partial, target)


def cannot_write(path: str | Path, error: OSError) -> str:
    """The one-line message a command prints when ``write_file`` failed."""
    return f"svc-sandbox: cannot write {path}: {error.strerror or error}"
