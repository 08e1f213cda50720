"""The generated page in a real browser: headless Chromium, driven by Playwright, from disk.

Needs Debian's ``chromium`` and the npm package ``playwright-core`` (``scripts/ci/browser.sh``
installs both). Without them the test is skipped on a developer's machine and fails in CI.
It takes a screenshot of each view; ``MNEM_UPDATE_SCREENSHOTS=1`` copies them into
``docs/history-view/``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commits
from mnem_autogen import MnemosyneMemory

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "history-view"
TOOLS = Path(os.environ.get("MNEM_BROWSER_TOOLS", Path.home() / ".cache" / "mnem-browser"))
PLAYWRIGHT_CORE = Path(
    os.environ.get("MNEM_PLAYWRIGHT_CORE", TOOLS / "node_modules" / "playwright-core")
)
CHROMIUM = os.environ.get("MNEM_CHROMIUM", "/usr/bin/chromium")
SHOTS = ("timeline.png", "item.png", "diff.png", "item-dark.png")


def browser_or_skip() -> str:
    """The node executable, once everything the browser test needs is here."""
    node = shutil.which("node")
    missing = [
        what
        for what, there in (
            ("node", node is not None),
            (f"chromium at {CHROMIUM}", os.path.exists(CHROMIUM)),
            (f"playwright-core at {PLAYWRIGHT_CORE}", PLAYWRIGHT_CORE.is_dir()),
        )
        if not there
    ]
    if missing:
        reason = "missing " + ", ".join(missing) + " (run scripts/ci/browser.sh)"
        if os.environ.get("CI") or os.environ.get("MNEM_REQUIRE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)
    assert node is not None
    return node


def test_the_page_shows_every_commit_an_items_origin_and_a_diff_in_chromium(
    mixed: Any, history: Any, tmp_path: Path
) -> None:
    node = browser_or_skip()
    page = tmp_path / "history.html"
    done = history(mixed.path, "html", "--out", str(page))
    assert done.returncode == 0, done.stderr
    shots = tmp_path / "shots"
    shots.mkdir()
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "item": "user/city",
                "diff": [mixed.marks["before_clear"], mixed.marks["cleared"]],
                "filter": "user/city",
                "row": mixed.marks["revised"],
            }
        )
    )

    run = subprocess.run(
        [
            node,
            str(HERE / "page_driver.cjs"),
            str(PLAYWRIGHT_CORE),
            CHROMIUM,
            str(page),
            str(shots),
            str(plan),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)

    chain = [c.id for c in commits(mixed.path)]
    assert seen["timeline"] == chain
    assert seen["row_words"].startswith("~ user/city Paris · the user corrected me")
    assert seen["row_item"] == "user/city"
    assert seen["item_title"] == "user/city"
    assert seen["origin"] == mixed.marks["revised"]
    assert sorted(seen["diff"]) == [
        ["notes:0000000001", "removed"],
        ["notes:0000000002", "removed"],
    ]
    assert "2 removed" in seen["diff_summary"]
    assert 0 < len(seen["filtered"]) < len(chain)
    assert mixed.marks["revised"] in seen["filtered"]
    assert seen["linked_item"] == "user/city"
    assert seen["dark_background"] != "rgb(255, 255, 255)"
    assert seen["seen"] == {"errors": [], "requests": [], "dialogs": []}
    for name in SHOTS:
        assert (shots / name).stat().st_size > 5_000
    if os.environ.get("MNEM_UPDATE_SCREENSHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        for name in SHOTS:
            shutil.copyfile(shots / name, DOCS / name)


HOSTILE_DRIVER = """
const [coreDir, chromiumPath, pageUrl] = process.argv.slice(2);
const { chromium } = require(coreDir);
(async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--headless", "--no-sandbox"] });
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(pageUrl);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 20000 });
  const timeline = await page.textContent("#timeline");
  console.log(JSON.stringify({ errors, timeline }));
  await browser.close();
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_a_malformed_link_and_bidirectional_controls_cannot_disturb_the_page(
    tmp_path: Path, history: Any
) -> None:
    node = browser_or_skip()
    store = tmp_path / "store"
    name = "ops\u202ecod.exe"  # shown reversed ("exe.doc") if the override reached the screen

    async def remember() -> None:
        memory = MnemosyneMemory(name, store)
        await memory.add(MemoryContent(content="a fact", mime_type="text/plain"))
        await memory.close()

    asyncio.run(remember())
    page = tmp_path / "history.html"
    done = history(store, "html", "--out", str(page))
    assert done.returncode == 0, done.stderr
    driver = tmp_path / "driver.cjs"
    driver.write_text(HOSTILE_DRIVER)
    url = "file://" + str(page) + "#item=%E0%A4%A"
    run = subprocess.run(
        [node, str(driver), str(PLAYWRIGHT_CORE), CHROMIUM, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    assert seen["errors"] == []
    assert "\u202e" not in seen["timeline"]
    assert "ops\\u202ecod.exe" in seen["timeline"]
