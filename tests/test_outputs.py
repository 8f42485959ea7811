"""Files the commands write: a file where a folder has to be is named, however deep."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_sandbox.outputs import cannot_write, write_file


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
