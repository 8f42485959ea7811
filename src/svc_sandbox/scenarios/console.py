"""Console output of ``svc-sandbox run`` (rich): a progress bar naming the running scenario,
then a summary table; a failure shows the step, request, response and expectation side by side."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.segment import Segments
from rich.table import Table
from rich.text import Text

from svc_sandbox.scenarios.model import Scenario
from svc_sandbox.scenarios.results import (
    ERROR,
    FAILED,
    PASSED,
    SKIPPED,
    ScenarioResult,
    summary,
)

STYLES = {PASSED: "green", FAILED: "red", ERROR: "red", SKIPPED: "yellow"}


class ConsoleReport:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._task: Any = None

    def start(self, total: int, target: str) -> None:
        self.console.print(Text(f"Running {total} scenario(s) against {target}"))
        self.progress.start()
        self._task = self.progress.add_task("starting", total=total)

    def hooks(self) -> tuple[Callable[[Scenario], None], Callable[[ScenarioResult], None]]:
        def started(scenario: Scenario) -> None:
            # The description is read as markup: a name's "[key=value]" must stay text.
            self.progress.update(self._task, description=escape(scenario.name))

        def finished(result: ScenarioResult) -> None:
            self.progress.advance(self._task)
            if result.status in (FAILED, ERROR):
                panel = failure_panel(result)
                if self.console.is_terminal:
                    self.progress.console.print(panel)
                else:
                    # Piped into a CI log rich takes 80 columns: three columns of JSON in
                    # them fold every other character. A log has room.
                    self.print_wide(panel, PIPED_PANEL_WIDTH)
            elif result.status == SKIPPED and result.message:
                line = f"{result.name}: skipped: {result.message}"
                self.progress.console.print(Text(line, style=STYLES[SKIPPED]))

        return started, finished

    def finish(self, results: list[ScenarioResult]) -> None:
        self.progress.stop()
        table = summary_table(results)
        if self.console.is_terminal:
            self.console.print(table)
        else:
            # Piped into a CI log, rich takes 80 columns: the table lost its last column and
            # broke names mid-word. There it is rendered as wide as its rows need.
            self.print_wide(table, natural_width(self.console, table))
        counts = summary(results)
        line = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        self.console.print(Text(line or "nothing ran", style="bold"))

    def print_wide(self, renderable: RenderableType, width: int) -> None:
        """``renderable`` in ``width`` columns, whatever the console's own width."""
        options = self.console.options.update_width(width)
        self.console.print(Segments(self.console.render(renderable, options)), crop=False)


#: The columns of a failure panel written to a file or pipe (a CI log).
PIPED_PANEL_WIDTH = 160
#: Wider than any summary table: what ``natural_width`` measures in.
_UNBOUNDED = 100_000


def natural_width(console: Console, table: Table) -> int:
    """The columns ``table`` takes when nothing makes it narrower."""
    options = console.options.update_width(_UNBOUNDED)
    return Measurement.get(console, options, table).maximum


def summary_table(results: list[ScenarioResult]) -> Table:
    table = Table(title="Scenarios", show_lines=False)
    table.add_column("scenario", min_width=24)
    table.add_column("file", style="dim", overflow="fold")
    table.add_column("status")
    table.add_column("steps", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("wall", justify="right")
    table.add_column("sandbox time", justify="right")
    for result in results:
        table.add_row(
            Text(result.name),
            Text(_short(result.file)),
            Text(result.status, style=STYLES[result.status]),
            str(len(result.steps)),
            str(len(result.skipped_steps)) if result.skipped_steps else "",
            f"{result.wall_seconds:.2f}s",
            _span(result.sandbox_seconds),
        )
    return table


def failure_panel(result: ScenarioResult) -> Panel:
    step = result.failure
    if step is None:
        return Panel(Text(result.message), title=_title(result), style="red")
    where = f"{result.file}:{step.line}" if step.line else result.file
    side = Table.grid(expand=True, padding=(0, 2))
    for column in ("request", "response", "expected"):
        # Folded, never cut with "…": a URL, a form body or a request id is what the reader
        # of a failure needs whole.
        side.add_column(column, ratio=1, overflow="fold")
    side.add_row(
        Text("request", style="bold"),
        Text("response", style="bold"),
        Text("expected", style="bold"),
    )
    side.add_row(_block(step.request), _block(step.response), _block(step.expectation))
    heading = Text(f"{where}  step {step.index}: {step.name}\n", style="bold")
    heading.append(step.message, style="red")
    return Panel(Group(heading, side), title=_title(result), style="red")


def _title(result: ScenarioResult) -> Text:
    """A panel title as text: matrix labels and any other "[...]" in names are kept."""
    return Text(f"{result.name}: {result.status}")


def _block(value: Any) -> Text:
    if value is None:
        return Text("-", style="dim")
    return Text(json.dumps(value, indent=2, default=str))


def _span(seconds: float) -> str:
    if not seconds:
        return ""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _short(file: str) -> str:
    """A file as the user named it from here: relative to the working folder when inside it."""
    path = Path(file)
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return path.name
