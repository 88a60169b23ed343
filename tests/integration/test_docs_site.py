"""The documentation: the README stays short and its links lead somewhere, the docs are a site
that MkDocs builds in strict mode (every page in the navigation, every link and anchor found), and
the HTTP API page lists exactly the operations of the OpenAPI document the app serves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.service import ROOT

pytestmark = pytest.mark.integration

README_MAX_LINES = 300  # what a newcomer reads; the rest is in the site's pages
ARCHITECTURE_MAX_LINES = 480  # how the parts fit; the detail of each task is on its page
OPERATIONS_MARKER = "<!-- openapi:operations -->"  # the table of docs/http-api.md that follows it


def test_the_readme_is_short_and_each_of_its_links_names_a_file_that_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)]+)\)", readme) if "://" not in t]
    assert targets
    assert [t for t in targets if not (ROOT / t).exists()] == []


def test_the_docs_build_as_a_site_with_no_broken_page_link_or_anchor(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")
    built = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
        text=True, timeout=120, env=os.environ | {"NO_MKDOCS_2_WARNING": "1"}, check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    nav = set(re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE))
    assert nav == pages  # every page is in the navigation, and the navigation names no missing page


def test_the_architecture_page_stays_an_overview() -> None:
    assert len((ROOT / "docs" / "ARCHITECTURE.md").read_text().splitlines()) <= ARCHITECTURE_MAX_LINES


def documented_operations() -> set[tuple[str, str]]:
    page = (ROOT / "docs" / "http-api.md").read_text()
    table = page.split(OPERATIONS_MARKER, 1)[1].strip().split("\n\n", 1)[0]
    return set(re.findall(r"^\| `([A-Z]+)` \| `([^`]+)` \|", table, re.MULTILINE))


def test_the_http_api_page_lists_exactly_the_operations_of_the_openapi_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMAGENT_DATABASE__URL", f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}")
    from interfaces.app import create_app  # the app as `memagent serve` builds it; building it does no I/O

    spec = create_app().openapi()
    served = {(method.upper(), path) for path, operations in spec["paths"].items() for method in operations}
    assert documented_operations() == served
