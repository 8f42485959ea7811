"""YAML a user hands the emulator: safe tags, aliases within ``ALIAS_NODES`` repeats (the
bound the scenario loader applies too), a 400 naming the file otherwise."""

from __future__ import annotations

import pytest

from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.yaml_input import ALIAS_NODES, load


def laughs(levels: int, width: int = 10) -> bytes:
    """``levels`` lists of ``width`` aliases of the one before: width^(levels+1) leaves."""
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    lines += [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)
    ]
    return ("\n".join(lines) + f"\nlast: *a{levels}\n").encode()


def test_aliases_within_the_bound_are_read_as_the_document_they_stand_for() -> None:
    data = load(laughs(3), "file f")  # 11,110 nodes repeated
    assert len(data["last"]) == 10 and data["last"][0][0][0] == ["x"] * 10
    shared = load(b"base: &b {outcome: approve}\nitems: [*b, *b]\n", "file f")
    assert shared["items"] == [{"outcome": "approve"}] * 2


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (laughs(4), f"file f: aliases repeat more than {ALIAS_NODES} nodes"),
        (laughs(8), f"file f: aliases repeat more than {ALIAS_NODES} nodes"),
        (b"a: &a [*a]\n", "file f: an alias inside its own anchor"),
        (b"a: &a {b: *a}\n", "file f: an alias inside its own anchor"),
        (b"a: !!python/object:os.system x\n", "file f is not valid YAML or JSON"),
        (b"\xff\xfe", "file f is not UTF-8 text"),
        (b"[" * 5000 + b"]" * 5000, "file f nests deeper than 64 levels"),
    ],
    ids=[
        "10^5 leaves",
        "10^9 leaves",
        "list in itself",
        "mapping in itself",
        "tag",
        "bytes",
        "deep",
    ],
)
def test_refused_with_the_file_named(raw: bytes, message: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        load(raw, "file f")
    assert refused.value.message.startswith(message)
