/**
 * `ragtrail view` as a person uses it: headless Chromium (Debian's `chromium`, driven by playwright-core)
 * opens the app over a real demo output and clicks through sources → run → question → annotation → tree →
 * pair → comparison → results, checking what is shown against the files; then opens the static bundle from
 * disk. No console error (a blocked script or style would be one) is allowed, and at 800 px the page does not
 * overflow sideways. Screenshots go to $RAGTRAIL_VIEW_SHOTS (the docs' images: docs/public/view/) or a
 * temporary folder named in the output.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { runDemo } from '../../src/pipelines/demo.js';
import { writeBundle } from '../../src/view/bundle.js';
import { ViewData } from '../../src/view/data.js';
import { viewServer } from '../../src/view/server.js';
import { findSources, type Source } from '../../src/view/sources.js';
import { tempDir } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const NO_CHROMIUM = existsSync(CHROMIUM) ? false : `needs ${CHROMIUM} (apt-get install -y chromium); CI installs it`;
const tmp = tempDir();
after(tmp.cleanup);
const out = join(tmp.dir, 'demo');
const shots = NO_CHROMIUM ? '' : process.env['RAGTRAIL_VIEW_SHOTS'] ?? mkdtempSync(join(tmpdir(), 'ragtrail-view-shots-'));
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);

let browser: Browser;
let base = '';
let sources: Source[] = [];
let close = () => {};

before(async () => {
  if (NO_CHROMIUM) return;
  // 10 simulations: enough for the gap diagnostic to mine pairs on more than one question (with 6 or 8 its PRM is skipped).
  await runDemo({ out, entities: 1000, trainQuestions: 30, testQuestions: 20, simulations: 10, grpoEpochs: 1, n: 4 });
  sources = findSources([out]);
  const server = viewServer(new ViewData(sources), '127.0.0.1');
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  close = () => server.close();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  mkdirSync(shots, { recursive: true });
  console.log(`# screenshots: ${shots}`);
});
after(async () => {
  close();
  await browser?.close();
});

async function open(width = 1280): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return { page, errors };
}
const byRel = (suffix: string) => sources.find((s) => s.rel.endsWith(suffix))!;

describe('ragtrail view in a browser', { skip: NO_CHROMIUM }, () => {
  it('sources → run → question: the list and the transcript show what the files hold', async () => {
    const { page, errors } = await open();
    await page.goto(base);
    for (const h of ['Results (2)', 'Runs (7)', 'Annotations (3)', 'Training logs (6)']) await page.getByRole('heading', { name: h }).waitFor();
    const run = byRel('/base__world-test');
    const file = lines(run.files['trajectories']!);
    await page.getByRole('link', { name: run.rel }).click();
    await page.locator('.vrow').first().waitFor();
    assert.equal(await page.locator('.vrow').count(), file.length); // 20 rows fit: all drawn
    assert.equal(await page.locator('.vrow').first().locator('span').nth(1).textContent(), file[0]!['id']);
    assert.match((await page.getByText(/of \d+ questions/).textContent())!, new RegExp(`^${file.length} of ${file.length} questions$`));
    await page.screenshot({ path: join(shots, 'run.png') });
    // Search narrows the list and lands in the URL.
    await page.getByRole('searchbox', { name: 'search questions' }).fill(String(file[3]!['id']));
    await page.getByText(`1 of ${file.length} questions`).waitFor();
    assert.match(page.url(), new RegExp(`q=${file[3]!['id']}`));
    await page.locator('.vrow').first().click();
    await page.locator('section.step').first().waitFor();
    const t = file[3]!;
    assert.equal(await page.locator('section.step').count(), t['steps'].length);
    assert.equal(await page.locator('.card .bad, .card .good').first().textContent(), t['prediction']);
    const supporting = new Set(t['meta'].supporting as string[]);
    const gold = t['steps'].flatMap((s: { docs?: { passageId: string }[] }) => s.docs ?? []).filter((d: { passageId: string }) => supporting.has(d.passageId)).length;
    assert.equal(await page.locator('.doc.gold').count(), gold);
    await page.screenshot({ path: join(shots, 'trajectory.png'), fullPage: false });
    // A PRM-guided run shows each candidate's score.
    const prm = byRel('/base_PRM_best-of-4__world-test');
    const first = lines(prm.files['trajectories']!)[0]!;
    const scored = first['steps'].find((s: { selection?: unknown }) => s.selection).selection.scored.length;
    await page.goto(`${base}#/run/${prm.id}/0`);
    await page.getByText(/PRM best-of: \d+ candidates/).first().waitFor();
    assert.equal(await page.locator('section.step').filter({ hasText: 'PRM best-of' }).first().locator('tbody tr').count(), scored);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('annotation → tree → pair: the pair\'s chosen and rejected nodes are marked; nodes collapse; the details are the node\'s', async () => {
    const { page, errors } = await open();
    const ann = sources.find((s) => s.kind === 'annotation')!;
    const pairs = lines(ann.files['pairs']!);
    const trees = lines(ann.files['trees']!);
    await page.goto(`${base}#/annotation/${ann.id}`);
    await page.getByRole('combobox', { name: 'show' }).selectOption('with pairs');
    await page.locator('.vrow').first().click();
    await page.locator('svg.tree .node').first().waitFor();
    const n = Number(new URL(page.url()).hash.split('/')[3]!.split('?')[0]);
    const tree = trees[n]!;
    const mine = pairs.filter((p) => p['questionId'] === tree['id']);
    assert.ok(mine.length > 0);
    assert.equal(await page.locator('svg.tree .node').count(), tree['nodes'].length);
    await page.locator('ol.pairs li').first().click();
    assert.equal(await page.locator(`svg.tree [data-node="${mine[0]!['chosen'].node}"]`).getAttribute('class'), 'node chosen');
    assert.equal(await page.locator(`svg.tree [data-node="${mine[0]!['rejected'].node}"]`).getAttribute('class'), 'node rejected');
    assert.match(page.url(), /pair=0/);
    await page.screenshot({ path: join(shots, 'tree.png') });
    const node = tree['nodes'].find((x: { parent: number }) => x.parent >= 0);
    await page.locator(`svg.tree [data-node="${node.id}"]`).click();
    assert.equal(await page.locator('.card table tr').filter({ hasText: 'visits N' }).locator('td').nth(1).textContent(), String(node.N));
    // Collapsing the root leaves the root alone.
    await page.locator(`svg.tree [data-toggle="${tree['nodes'].find((x: { parent: number }) => x.parent < 0).id}"]`).click();
    assert.equal(await page.locator('svg.tree .node').count(), 1);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('two runs side by side: the counts are those of the files, and a question opens both transcripts', async () => {
    const { page, errors } = await open();
    const a = byRel('/GRPO_outcome___world-test'), b = byRel('/base__world-test');
    const fa = new Map(lines(a.files['trajectories']!).map((t) => [t['id'], t]));
    const fb = lines(b.files['trajectories']!);
    const onlyA = fb.filter((t) => fa.get(t['id'])!['metrics'].em && !t['metrics'].em).length;
    const onlyB = fb.filter((t) => !fa.get(t['id'])!['metrics'].em && t['metrics'].em).length;
    await page.goto(base);
    await page.getByRole('combobox', { name: 'first run' }).selectOption(a.id);
    await page.getByRole('combobox', { name: 'second run' }).selectOption(b.id);
    await page.getByRole('button', { name: 'compare' }).click();
    await page.getByText(/only A right/).waitFor();
    assert.match((await page.getByText(/only A right/).textContent())!, new RegExp(`only A right ${onlyA} · only B right ${onlyB}`));
    await page.screenshot({ path: join(shots, 'compare.png') });
    if (await page.locator('.vrow').count()) {
      await page.locator('.vrow').first().click();
      await page.getByRole('heading', { name: 'Steps' }).nth(1).waitFor();
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('results: systems with CIs link to their runs, paired tests, the PRM chart with its chance line; nothing overflows at 800 px', async () => {
    const { page, errors } = await open(800);
    const res = byRel('/seed-0/eval');
    await page.goto(`${base}#/results/${res.id}`);
    await page.getByRole('heading', { name: 'Paired against base' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'open' }).count(), 7);
    await page.getByText('chance', { exact: true }).waitFor();
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= 800'), 'the page overflows at 800 px');
    await page.screenshot({ path: join(shots, 'results-800.png'), fullPage: true });
    const training = byRel('/seed-0/step-dpo'); // a point per DPO step: long enough for a trend line
    await page.goto(`${base}#/training/${training.id}`);
    await page.locator('polyline.trend').first().waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('the static bundle opens from disk and shows the same run', async () => {
    const dir = join(tmp.dir, 'bundle');
    await writeBundle(new ViewData(sources), dir);
    const { page, errors } = await open();
    const run = byRel('/base__world-test');
    await page.goto(`${pathToFileURL(join(dir, 'index.html')).href}#/run/${run.id}/0`);
    await page.locator('section.step').first().waitFor();
    assert.equal(await page.locator('section.step').count(), lines(run.files['trajectories']!)[0]!['steps'].length);
    assert.equal(await page.locator('#mode').textContent(), 'static bundle');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
