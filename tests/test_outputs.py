"""Files the commands write: a file where a folder has to be is named, however deep."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from svc_sandbox.outputs import cannot_write, why_unwritable, write_file


@pytest.mark.parametrize("below", ["x.json", "ci/run.json"], ids=["parent", "above the parent"])
def test_a_file_where_a_folder_has_to_be_is_named(tmp_path: Path, below: str) -> None:
    """The OS says "File exists" (the parent is the file) or "Not a directory" (a folder
    above it is), naming neither."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder would have to be")
    target = blocker / below
    with pytest.raises(OSError) as caught:
        write_file(target, "{}")
    assert cannot_write(target, caught.value) == (
        f"svc-sandbox: cannot write {target}: {blocker} is a file, where a folder would have to be"
    )


NOT_A_FILE = "it is not a regular file (a device, a pipe): it would be replaced"


def test_a_pipe_or_device_is_not_a_file_to_write_over(tmp_path: Path) -> None:
    """The export is written whole, then renamed into place: `--export-on-exit /dev/null` made
    /dev/null a regular file. Found at start, as a folder in the way is."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    problem = why_unwritable(fifo)
    assert problem is not None
    said = cannot_write(fifo, problem)
    assert said == f"svc-sandbox: cannot write {fifo}: {NOT_A_FILE}"
    assert why_unwritable("/dev/null") is not None
    assert why_unwritable(tmp_path / "new.json") is None
