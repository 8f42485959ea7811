"""Files the commands write (state exports, reports, recorded scenarios): the folders on the
way are made, and the file appears whole or not at all."""

from __future__ import annotations

import errno
import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

#: Characters XML 1.0 cannot hold, even escaped (§2.2): C0 controls but tab, newline and
#: carriage return, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


@functools.cache
def _not_xml() -> re.Pattern[str]:
    # Compiled when a report is first written: its ranges take 9 ms to compile, which every
    # start of `serve` paid (the sandbox imports this module to write exports).
    return re.compile(_NOT_XML)


def write_file(path: str | Path, data: bytes | str) -> None:
    """Writes ``data`` to ``path``, making its missing parent folders; raises OSError."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        # A file where a folder has to be: the OS says "File exists" (the parent itself) or
        # "Not a directory" (a folder above it), which names neither.
        blocker = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
        if blocker is None:
            raise
        raise _file_in_the_way(blocker) from None
    encoded = data.encode("utf-8") if isinstance(data, str) else data
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as out:
        out.write(encoded)
    os.replace(partial, target)


def why_unwritable(path: str | Path) -> OSError | None:
    """Why ``write_file(path, ...)`` would fail, found without writing anything: a folder at
    ``path`` (or a device, a pipe: the rename would replace it), a file where a folder has to
    be, or a folder this process may not write in;
    None when none of these holds. A command writing at its end checks this at its start, so
    a long run does not end with its output lost (what changes meanwhile, a disk that fills,
    is still said at the end)."""
    target = Path(path)
    if target.is_dir():
        return IsADirectoryError(errno.EISDIR, "it is a folder")
    if target.exists() and not target.is_file():
        # The file is written whole, then renamed into place: /dev/null became a file.
        return OSError(
            errno.EINVAL, "it is not a regular file (a device, a pipe): it would be replaced"
        )
    existing = next(p for p in target.parents if p.exists())  # the root at least
    if not existing.is_dir():
        return _file_in_the_way(existing)
    if not os.access(existing, os.W_OK | os.X_OK):
        return PermissionError(errno.EACCES, f"{existing} is not a folder this user can write in")
    return None


def _file_in_the_way(blocker: Path) -> NotADirectoryError:
    return NotADirectoryError(
        errno.ENOTDIR, f"{blocker} is a file, where a folder would have to be"
    )


def cannot_write(path: str | Path, error: OSError) -> str:
    """The one-line message a command prints when ``write_file`` failed."""
    return f"svc-sandbox: cannot write {path}: {error.strerror or error}"


def xml_text(text: str) -> str:
    """``text`` with each character XML cannot hold written as its escape (``\\x1b``)."""
    return _not_xml().sub(lambda found: found.group().encode("unicode_escape").decode(), text)


def xml_safe(root: Element) -> Element:
    """``root`` with the text and attributes of every element made ``xml_text`` (a JUnit
    report naming a scenario with ``\\x01`` in it stays well-formed XML)."""
    for element in root.iter():
        if element.text:
            element.text = xml_text(element.text)
        if element.tail:
            element.tail = xml_text(element.tail)
        for name, value in element.attrib.items():
            element.attrib[name] = xml_text(value)
    return root
