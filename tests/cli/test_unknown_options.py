"""An option a command does not take is refused with that command's usage and exit status 2
(argparse's top-level parser said it, with the usage listing the commands, not the options
of the one typed)."""

from __future__ import annotations

import pytest

from svc_sandbox.cli import main


@pytest.mark.parametrize(
    ("argv", "usage", "prefix"),
    [
        (["exec", "--bogus", "--", "true"], "usage: svc-sandbox exec", "svc-sandbox exec"),
        (["serve", "--bogus"], "usage: svc-sandbox serve", "svc-sandbox serve"),
        (
            ["contract", "show", "--bogus"],
            "usage: svc-sandbox contract show",
            "svc-sandbox contract show",
        ),
        (["run", "--bogus", "x.yaml"], "usage: svc-sandbox run", "svc-sandbox run"),
    ],
)
def test_an_unknown_option_is_refused_by_the_command_it_was_given_to(
    argv: list[str], usage: str, prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert said.startswith(usage)
    assert said.rstrip().endswith(f"{prefix}: error: unrecognized arguments: --bogus")


def test_what_follows_exec_double_dash_is_the_commands_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """exec passes everything after ``--`` to CMD, unknown options included."""
    assert main(["exec", "--port", "0", "--", "sh", "-c", "exit 3", "sh", "--bogus"]) == 3
