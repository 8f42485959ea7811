"""What the console script does with its output: a reader that stops early (``| head``) ends
the command quietly, as SIGPIPE ends other tools, without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_a_reader_gone_before_the_output_ends_the_command_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write fails
    try:
        finished = subprocess.run(
            [sys.executable, "-m", "svc_sandbox", "contract", "show"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert finished.stderr == ""
    assert finished.returncode == 141  # 128 + SIGPIPE, as a shell reports `cmd | head`


def test_contract_show_prints_the_contract_asked_for_as_shipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from svc_sandbox.cli import main
    from svc_sandbox.contract.document import BY_NAME, contract_text

    for name, document in BY_NAME.items():
        assert main(["contract", "show", "--contract", name]) == 0
        assert capsys.readouterr().out == contract_text(document)
    assert main(["contract", "show"]) == 0
    assert capsys.readouterr().out == contract_text(BY_NAME["commerce"])
