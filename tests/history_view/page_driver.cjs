// Drives the history page in headless Chromium and reports what a person would see.
//
//   node page_driver.cjs PLAYWRIGHT_CORE_DIR CHROMIUM PAGE.html SHOTS_DIR PLAN.json
//
// PLAN.json: {"item": node id to open, "diff": [commit A, commit B], "filter": text,
//             "row": a commit whose row's words and item link are read}.
// The dark-scheme page opens the item from a link (#item=...).
// Prints one JSON object: the timeline's commits, the item panel's origin commit, the diff's
// items, the filtered row count, and anything that went wrong (errors, requests, dialogs).
"use strict";
const fs = require("fs");
const path = require("path");

const [coreDir, chromiumPath, pageFile, shotsDir, planFile] = process.argv.slice(2);
const { chromium } = require(coreDir);
const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run",
];

(async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ARGS });
  const seen = { errors: [], requests: [], dialogs: [] };
  const pageUrl = "file://" + path.resolve(pageFile);
  async function open(colorScheme, hash) {
    const page = await browser.newPage({ viewport: { width: 1100, height: 720 }, colorScheme });
    page.on("pageerror", (error) => seen.errors.push(String(error)));
    page.on("console", (message) => { if (message.type() === "error") seen.errors.push(message.text()); });
    page.on("request", (request) => { if (request.url() !== pageUrl) seen.requests.push(request.url()); });
    page.on("dialog", async (dialog) => { seen.dialogs.push(dialog.message()); await dialog.dismiss(); });
    await page.goto(pageUrl + (hash || ""));
    await page.waitForSelector('html[data-complete="true"]');
    return page;
  }
  const shot = (page, name) => page.screenshot({ path: path.join(shotsDir, name) });
  const report = {};

  const page = await open("light");
  report.timeline = await page.$$eval("#timeline li.row", (rows) => rows.map((r) => r.dataset.commit));
  await page.click("#timeline li.row:nth-child(1) .id");
  await page.waitForSelector("#timeline li.row:nth-child(1) .detail");
  await shot(page, "timeline.png");
  // a commit's row says what it changed; the item it names is one click away
  const row = `#timeline li.row[data-commit="${plan.row}"]`;
  report.row_words = await page.textContent(`${row} .what`);
  await page.click(`${row} .what button.link`);
  await page.waitForSelector("#item-panel h2");
  report.row_item = await page.getAttribute("#item-panel", "data-item");

  await page.click('nav button[data-view="items"]');
  const item = `#items li.row[data-item="${CSS_escape(plan.item)}"]`;
  await page.click(item);
  await page.waitForSelector("#item-panel #origin");
  report.item_title = await page.textContent("#item-panel h2");
  report.origin = await page.getAttribute("#item-panel #origin [data-commit]", "data-commit");
  await shot(page, "item.png");

  await page.click('nav button[data-view="diff"]');
  const index = (id) => page.$eval(`#diff-a option[data-commit="${id}"]`, (o) => o.value);
  await page.selectOption("#diff-a", await index(plan.diff[0]));
  await page.selectOption("#diff-b", await index(plan.diff[1]));
  report.diff = await page.$$eval("#diff-result li[data-item]", (rows) =>
    rows.map((r) => [r.dataset.item, r.dataset.kind]));
  report.diff_summary = await page.textContent("#diff-summary");
  await shot(page, "diff.png");

  await page.click('nav button[data-view="timeline"]');
  await page.fill("#filter", plan.filter);
  await page.waitForFunction(() => document.getElementById("timeline-count").textContent.includes("match"));
  report.filtered = await page.$$eval("#timeline li.row", (rows) => rows.filter((r) => !r.hidden).map((r) => r.dataset.commit));

  // a link to the item opens its panel; this page follows the system's dark scheme
  const dark = await open("dark", "#item=" + encodeURIComponent(plan.item));
  await dark.waitForSelector("#item-panel #origin");
  report.linked_item = await dark.getAttribute("#item-panel", "data-item");
  report.dark_background = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await shot(dark, "item-dark.png");

  report.seen = seen;
  await browser.close();
  process.stdout.write(JSON.stringify(report));
})().catch((error) => {
  process.stderr.write(String(error && error.stack || error));
  process.exit(1);
});

function CSS_escape(text) {
  return text.replace(/["\\]/g, "\\$&");
}
