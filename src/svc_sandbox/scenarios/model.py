"""What a loaded scenario is: its document, where it came from and the matrix row it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: What a scenario file is named (loader.py; pytest collects such files by name alone).
SUFFIXES = (".yaml", ".yml")

#: A position in the document: keys and list indexes from the top.
DocPath = tuple[str | int, ...]


class ScenarioError(Exception):
    """A scenario that cannot run as written: always names the file, the line and the path."""

    def __init__(self, file: Path | str, line: int | None, path: DocPath, message: str) -> None:
        self.file = str(file)
        self.line = line
        self.path = path
        self.message = message
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        at = f" at {dotted(self.path)}" if self.path else ""
        return f"{where}: {self.message}{at}"


def dotted(path: DocPath) -> str:
    """``("steps", 2, "request")`` -> ``steps[2].request``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


@dataclass(frozen=True)
class Lines:
    """The line (1-based) of every node of a YAML document, by its path."""

    file: Path
    by_path: dict[DocPath, int] = field(default_factory=dict)

    def of(self, path: DocPath) -> int | None:
        """The line of ``path``, or of its nearest ancestor the document has."""
        for end in range(len(path), -1, -1):
            line = self.by_path.get(path[:end])
            if line is not None:
                return line
        return None

    def error(self, path: DocPath, message: str) -> ScenarioError:
        return ScenarioError(self.file, self.of(path), path, message)

    def error_at(self, line: int, path: DocPath, message: str) -> ScenarioError:
        return ScenarioError(self.file, line, path, message)


@dataclass(frozen=True)
class Scenario:
    """One runnable scenario: a file's document with one matrix row's values bound."""

    document: dict[str, Any]
    lines: Lines
    #: The matrix row's values ({} without a matrix) and its label such as ``code=payment_failed``.
    row: dict[str, Any] = field(default_factory=dict)
    row_label: str = ""

    @property
    def file(self) -> Path:
        return self.lines.file

    @property
    def name(self) -> str:
        base = str(self.document["name"])
        return f"{base} [{self.row_label}]" if self.row_label else base

    @property
    def tags(self) -> list[str]:
        return [str(t) for t in self.document.get("tags", [])]

    @property
    def steps(self) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = self.document["steps"]
        return steps

    @property
    def seed(self) -> int | None:
        seed = self.document.get("seed")
        return int(seed) if seed is not None else None

    def seed_or(self, default: int | None) -> int:
        """The file's ``seed``, else ``default`` (``run --seed``, pytest's ``--svc-seed``),
        else 1: a recording carries its emulator's seed, so that a replay makes its ids."""
        if self.seed is not None:
            return self.seed
        return default if default is not None else 1
