// `ember board` in a real browser (Debian's chromium, headless, driven by
// playwright-core): the page loads and lists a finished run with its test
// accuracy in the run table, a second run started while the page is open
// appears, and its per-step curve gains a point while it trains, from
// answers that carry only the new rows (the finished run is not asked
// again); a header click sorts the run table; the finished run's
// report.html fits 1280 px.
// Exits non-zero on any failure (never skips).
//   node board_browser_test.mjs EMBER_BINARY SOURCE_DIR [CHROMIUM]
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const [ember, sourceDir, browserPath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!ember || !sourceDir) throw new Error("usage: node board_browser_test.mjs EMBER_BINARY SOURCE_DIR [CHROMIUM]");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "ember_board_browser_"));
const config = path.join(sourceDir, "configs/fashion_mnist_mlp.yaml");
const children = [];

function log(msg) { console.log(`board-browser: ${msg}`); }
function trainArgs(name, extra) {
  return ["train", config, "model.hidden=[16]", "data.limit_test=50", "data.val_fraction=0", "data.batch_size=10",
          "train.checkpoint.monitor=train_loss", "train.threads=1", "data.num_workers=0", "log.progress=none",
          "log.steps_every=10", `log.root=${root}`, `log.name=${name}`, ...extra];
}
async function until(what, fn, seconds = 60) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${seconds} s waiting for: ${what}`);
    await new Promise(r => setTimeout(r, 200));
  }
}
// The names of the runs the page lists (its checkboxes).
const listed = page => page.$$eval("#runs input[data-run]", es => es.map(e => e.dataset.run));
// Points of `run`'s curve in the per-step train_loss chart (0: none drawn).
// The run table's rows (run names, in order) and its header cells.
const tableRuns = page => page.$$eval("#params-table tr[data-run]", es => es.map(e => e.dataset.run));
const tableHeader = page => page.$$eval("#params-table th[data-key]", es => es.map(e => e.dataset.key));
const stepPoints = (page, run) => page.$$eval(`svg[data-chart="steps:train_loss"] polyline`,
  (es, run) => Number((es.find(e => e.dataset.run === run) || { dataset: { points: 0 } }).dataset.points), run);

async function main() {
  log(`root ${root}`);
  // 1. A short real run that finishes.
  const first = spawnSync(ember, trainArgs("first", ["data.limit_train=300", "train.epochs=2"]), { encoding: "utf8" });
  if (first.status !== 0) throw new Error(`the first ember train failed (${first.status}):\n${first.stdout}${first.stderr}`);
  const firstRun = fs.readdirSync(root).find(n => n.startsWith("first"));
  if (!firstRun) throw new Error(`no run directory for the first run under ${root}`);

  // 2. ember board on any free port.
  const board = spawn(ember, ["board", root, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(board);
  let out = "";
  board.stdout.on("data", d => { out += d; });
  const url = await until("ember board's address", () => (out.match(/(http:\/\/[^\s]+)/) || [])[1], 30);
  log(`board at ${url}`);

  // 3. The page in headless chromium lists the first run.
  const browser = await chromium.launch({ executablePath: browserPath, headless: true, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", e => errors.push(e.message));
    // Every /api/steps answer: the run it was for, the offset asked from, and whether it only appended.
    const stepAnswers = [];
    page.on("response", async r => {
      const u = new URL(r.url());
      if (u.pathname !== "/api/steps") return;
      try {
        const body = await r.json();
        stepAnswers.push({ run: u.searchParams.get("run"), from: Number(u.searchParams.get("from")),
                           append: body.append, rows: body.rows.length });
      } catch (e) { errors.push(`an /api/steps answer was not JSON: ${e.message}`); }
    });
    await page.goto(url);
    await until(`the page lists ${firstRun}`, async () => (await listed(page)).includes(firstRun));
    if (await stepPoints(page, firstRun) < 1) throw new Error("the first run's per-step curve has no point");
    log(`listed ${firstRun} with ${await stepPoints(page, firstRun)} per-step points`);
    // The run table: the finished run with its test accuracy column.
    await until("the run table lists the first run", async () => (await tableRuns(page)).includes(firstRun));
    const header = await tableHeader(page);
    if (!header.includes("results.test_acc")) throw new Error(`the run table has no test_acc column: ${header}`);

    // report.html of the finished run fits 1280 px (Note [report width]).
    const report = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await report.goto("file://" + path.join(root, firstRun, "report.html"));
    const width = await report.evaluate(() => document.documentElement.scrollWidth);
    if (width > 1280) throw new Error(`report.html is ${width} px wide at a 1280 px window`);
    log(`report.html is ${width} px wide at 1280 px`);
    await report.screenshot({ path: path.join(os.tmpdir(), "ember_board_report.png"), fullPage: true });
    await page.screenshot({ path: path.join(os.tmpdir(), "ember_board_page.png"), fullPage: true });

    // 4. A second, longer run appears while the page is open...
    // As many epochs as it takes: it trains until the check ends and stops it.
    // 200 epochs (~1 minute) ended before a loaded CI machine saw the curve grow.
    const second = spawn(ember, trainArgs("second", ["data.limit_train=3000", "train.epochs=100000"]),
                         { stdio: ["ignore", "ignore", "inherit"] });
    children.push(second);
    let exited = false;
    second.on("exit", () => { exited = true; });
    const names = await until("a second run on the page", async () => {
      const n = await listed(page);
      return n.length >= 2 && n;
    }, 120);
    const secondRun = names.find(n => n.startsWith("second"));
    if (!secondRun) throw new Error(`the page lists ${names} but no second run`);
    log(`second run ${secondRun} appeared`);
    // 5. ...and its per-step curve gains a point while it trains.
    const before = await until("a point of the second run's curve", () => stepPoints(page, secondRun), 120);
    const after = await until("the second run's curve to gain a point",
      async () => { const n = await stepPoints(page, secondRun); return n > before && n; }, 120);
    if (exited) throw new Error("the second run ended before its curve was seen to grow");
    log(`second run's curve grew from ${before} to ${after} points while training`);
    // Increments: the growing run's later answers only appended rows; the finished run was asked once.
    const appended = stepAnswers.filter(a => a.run === secondRun && a.append && a.from > 0 && a.rows > 0);
    if (!appended.length) throw new Error(`no answer for ${secondRun} appended rows: ${JSON.stringify(stepAnswers)}`);
    const firstAsked = stepAnswers.filter(a => a.run === firstRun).length;
    if (firstAsked !== 1) throw new Error(`the finished run's steps.csv was asked for ${firstAsked} times, not once`);
    log(`${appended.length} answers appended rows to ${secondRun}; ${firstRun} was asked once`);

    // 6. Both runs in the run table; a click on "run" sorts by name, a second click reverses it.
    await until("both runs in the run table", async () => (await tableRuns(page)).length === 2);
    await page.click('#params-table th[data-key="run"]');
    const up = await tableRuns(page);
    await page.click('#params-table th[data-key="run"]');
    const down = await tableRuns(page);
    if (up.join() !== [firstRun, secondRun].sort().join() || down.join() !== up.slice().reverse().join())
      throw new Error(`sorting the run table by run gave ${up}, then ${down}`);
    log(`the run table sorts: ${up} / ${down}`);
    if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  } finally {
    await browser.close();
  }
}

let code = 0;
try {
  await main();
  log("PASSED");
} catch (e) {
  console.error(`board-browser: FAILED: ${e.message}`);
  code = 1;
} finally {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  await new Promise(r => setTimeout(r, 500));
  fs.rmSync(root, { recursive: true, force: true });
}
process.exit(code);
