"""The pytest plugin collects scenario files as items: one per scenario and matrix row."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scenarios.helpers import write


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_scenarios_folders_and_svc_scenarios_dirs_become_items(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "qa").mkdir()
    write(
        tmp_path / "scenarios",
        "grid.yaml",
        """
        name: grid
        matrix: {status: [draft, published]}
        steps:
          - request: {path: /products, query: {status: "${status}"}}
            expect: {status: 200, json: {total: 0}}
        """,
    )
    write(
        tmp_path / "qa",
        "wrong.yaml",
        """
        name: wrong
        steps:
          - request: {path: /products}
            expect: {status: 418}
        """,
    )
    collected = pytest_run(tmp_path, "--co", "scenarios")
    assert "2 tests collected" in collected.stdout, collected.stdout + collected.stderr
    ran = pytest_run(tmp_path, "scenarios", "--svc-scenarios", "qa")
    out = ran.stdout
    assert "1 failed, 2 passed" in out, out + ran.stderr
    assert "wrong.yaml:3: step steps[0] (GET /products)" in out
    assert "status: expected 418, got 200" in out


def test_a_bad_file_is_a_collection_error_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    write(tmp_path / "scenarios", "bad.yaml", "name: x\nsteps:\n  - control: {action: nap}\n")
    ran = pytest_run(tmp_path, "scenarios")
    assert ran.returncode != 0
    assert "bad.yaml:3: unknown control action 'nap'" in ran.stdout, ran.stdout


def test_every_item_has_the_svc_scenario_marker_tagged_or_not(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    step = "steps:\n  - request: {path: /products}\n    expect: {status: 200}\n"
    write(tmp_path / "scenarios", "tagged.yaml", "name: tagged\ntags: [x]\n" + step)
    write(tmp_path / "scenarios", "untagged.yaml", "name: untagged\n" + step)
    every = pytest_run(tmp_path, "-m", "svc_scenario", "scenarios")
    assert "2 passed" in every.stdout, every.stdout + every.stderr
    tagged = pytest_run(tmp_path, "-m", "not svc_scenario", "scenarios")
    assert "2 deselected" in tagged.stdout, tagged.stdout + tagged.stderr


@pytest.mark.parametrize(
    ("selection", "selected"),
    [
        (["-m", "svc_scenario(tag='smoke')"], {"fast", "both"}),
        (["-m", "svc_scenario(tag='slow') and not svc_scenario(tag='smoke')"], {"slow"}),
        (["-k", "smoke"], {"fast", "both"}),
        (["-k", "slow and not smoke"], {"slow"}),
    ],
)
def test_tags_select_scenarios_with_m_and_k(
    tmp_path: Path, selection: list[str], selected: set[str]
) -> None:
    (tmp_path / "scenarios").mkdir()
    step = "steps:\n  - request: {path: /products}\n    expect: {status: 200}\n"
    for name, tags in (("fast", "[smoke]"), ("slow", "[slow]"), ("both", "[smoke, slow]")):
        write(tmp_path / "scenarios", f"{name}.yaml", f"name: {name}\ntags: {tags}\n" + step)
    write(tmp_path / "scenarios", "plain.yaml", "name: plain\n" + step)
    listed = pytest_run(tmp_path, "--co", *selection, "scenarios")
    chosen = set(re.findall(r"^scenarios/\w+\.yaml::(\w+)$", listed.stdout, re.M))
    assert chosen == selected, listed.stdout + listed.stderr


K8S = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"


def test_unrelated_yaml_in_a_scenarios_folder_says_how_to_stop_collecting_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "deploy" / "scenarios").mkdir(parents=True)
    (tmp_path / "deploy" / "scenarios" / "configmap.yaml").write_text(K8S)
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    ran = pytest_run(tmp_path)
    assert ran.returncode != 0
    assert "configmap.yaml:1: schema: 'name' is a required property" in ran.stdout, ran.stdout
    assert "set 'svc_scenarios_folder =' in the pytest ini file" in ran.stdout
    (tmp_path / "pytest.ini").write_text("[pytest]\nsvc_scenarios_folder =\n")
    assert "1 passed" in pytest_run(tmp_path).stdout


def test_the_folder_name_can_be_another_and_svc_scenarios_still_collects(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "configmap.yaml").write_text(K8S)
    for folder in ("flows", "qa"):
        (tmp_path / folder).mkdir()
        write(
            tmp_path / folder,
            "listing.yaml",
            f"""
            name: listing in {folder}
            steps:
              - request: {{path: /products}}
                expect: {{status: 200}}
            """,
        )
    (tmp_path / "pytest.ini").write_text("[pytest]\nsvc_scenarios_folder = flows\n")
    ran = pytest_run(tmp_path, "--svc-scenarios", "qa")
    assert "2 passed" in ran.stdout, ran.stdout + ran.stderr
    # Given on purpose, a folder's YAML errors without the hint about folder names.
    bad = pytest_run(tmp_path, "--svc-scenarios", "scenarios", "scenarios")
    assert "configmap.yaml:1: schema" in bad.stdout and "svc_scenarios_folder" not in bad.stdout


@pytest.mark.parametrize(("line", "expected"), [("", 3), ("seed: 9", 9)])
def test_svc_seed_is_the_seed_of_a_collected_scenario_without_its_own(
    tmp_path: Path, line: str, expected: int
) -> None:
    """--svc-seed seeded the fixtures' sandboxes but not the scenario items' (always 1)."""
    (tmp_path / "scenarios").mkdir()
    write(
        tmp_path / "scenarios",
        "seeded.yaml",
        f"""
        name: seeded
        {line}
        steps:
          - control: {{action: info}}
            expect: {{json: {{seed: {expected}}}}}
        """,
    )
    ran = pytest_run(tmp_path, "scenarios", "--svc-seed", "3")
    assert "1 passed" in ran.stdout, ran.stdout + ran.stderr
