/**
 * `download` against a loopback Hub (hub-fixture.ts) serving real benchmark files at the Hub's URL
 * layout: LFS redirects to another origin, Range resumes, checksums from X-Linked-Etag / ETag, dropped
 * connections, corrupted bodies, a refused connection. No network.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError, RagtrailError } from '../../src/core/errors.js';
import { readCorpus } from '../../src/corpus/corpus.js';
import { loadDataset } from '../../src/corpus/dataset.js';
import { ChecksumError, download, DOWNLOADS, formatBytes, hubUrl } from '../../src/corpus/download.js';
import { extractZip, readZipDirectory } from '../../src/corpus/unzip.js';
import { cliRunner, collectAll, data, ROOT, tempDir } from '../helpers.js';
import { closedPort, type FixtureFile, gitSha1, type Hub, makeZip, sha256, startHub } from './hub-fixture.js';

const tmp = tempDir();
after(tmp.cleanup);
let n = 0;
const fresh = () => join(tmp.dir, `out-${++n}`);

// HotpotQA dev in FlashRAG's layout (golden_answers; type, level, supporting_facts, context in
// metadata), made from the 100 real dev questions of the shared sample.
interface HfHotpot { question: string; answer: string; type: string; level: string; supporting_facts: unknown; context: { title: string[]; sentences: string[][] } }
const hf = JSON.parse(readFileSync(data('hotpotqa', 'distractor_dev_sample100_hf.json'), 'utf8')) as HfHotpot[];
const hotpotDev = Buffer.from(
  hf.map((r, i) => JSON.stringify({ id: `dev_${i}`, question: r.question, golden_answers: [r.answer], metadata: { type: r.type, level: r.level, supporting_facts: r.supporting_facts, context: r.context } })).join('\n') + '\n',
);
const bamboogle = readFileSync(data('flashrag', 'bamboogle_test.jsonl'));
const popqa = readFileSync(data('flashrag', 'popqa_test_sample500.jsonl'));
// A wiki18_100w-shaped corpus ({id, contents: "\"Title\"\ntext"}) from the same questions' paragraphs.
const passages = new Map<string, string>();
for (const r of hf) r.context.title.forEach((t, i) => passages.set(`"${t}"\n${r.context.sentences[i]!.join('').trim()}`, t));
const corpusLines = [...passages.keys()].map((contents, i) => JSON.stringify({ id: String(i), contents }));
const wikiJsonl = Buffer.from(corpusLines.join('\n') + '\n');
const wikiZip = makeZip([{ name: 'wiki18_100w.jsonl', data: wikiJsonl }], true);

const fixtures: FixtureFile[] = [
  { path: 'hotpotqa/dev.jsonl', body: hotpotDev, lfs: true },
  { path: 'bamboogle/test.jsonl', body: bamboogle, lfs: false },
  { path: 'popqa/test.jsonl', body: popqa, lfs: true },
  { path: 'nq/test.jsonl', body: bamboogle, lfs: false },
  { path: 'retrieval-corpus/wiki18_100w.zip', body: wikiZip, lfs: true },
];

let hub: Hub;
before(async () => {
  hub = await startHub(fixtures);
});
after(async () => hub.close());

const quick = (out: string) => ({ out, endpoint: hub.endpoint, quiet: true, retryDelayMs: 5, log: () => undefined });

describe('ragtrail download against a loopback Hub', () => {
  it('builds the Hub URL layout', () => {
    assert.equal(hubUrl('https://huggingface.co/', 'RUC-NLPIR/FlashRAG_datasets', 'main', 'hotpotqa/dev.jsonl'), 'https://huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets/resolve/main/hotpotqa/dev.jsonl');
  });

  it('an LFS file: follows the redirect, checks the sha256 from X-Linked-Etag, keeps the token at the Hub, and loads with the FlashRAG loader', async () => {
    const out = fresh();
    const before = hub.log.length;
    const r = await download('hotpotqa', { ...quick(out), token: 'hf_test_token' });
    const f = r.files[0]!;
    assert.equal(f.path, 'hotpotqa/dev.jsonl');
    assert.equal(f.status, 'downloaded');
    assert.equal(f.checkedBy, 'sha256');
    assert.equal(f.sha256, sha256(hotpotDev));
    assert.equal(f.commit, hub.commit);
    assert.equal(f.bytes, hotpotDev.length);
    assert.ok(readFileSync(join(out, 'hotpotqa', 'dev.jsonl')).equals(hotpotDev));
    assert.ok(!existsSync(join(out, 'hotpotqa', 'dev.jsonl.part')));
    const reqs = hub.log.slice(before);
    assert.deepEqual(reqs.map((q) => q.server), ['hub', 'cdn']);
    assert.equal(reqs[0]!.authorization, 'Bearer hf_test_token');
    assert.equal(reqs[1]!.authorization, undefined, 'the token must not travel to the CDN');
    // Only dev by default; train is named as the split left out.
    assert.deepEqual(r.skippedSplits.map((s) => s.split), ['train']);
    const qs = await collectAll(loadDataset(f.file));
    assert.equal(qs.length, 100);
    assert.equal(qs[0]!.question, 'Were Scott Derrickson and Ed Wood of the same nationality?');
    assert.deepEqual(qs[0]!.answers, ['yes']);
    assert.equal(qs[0]!.context?.length, 10);
    assert.equal(qs[0]!.supporting?.length, 2);
    // Provenance recorded beside the files.
    const manifest = JSON.parse(readFileSync(join(out, 'ragtrail-download.json'), 'utf8')) as { files: Record<string, { sha256: string; commit: string; checkedBy: string }> };
    assert.deepEqual({ ...manifest.files['hotpotqa/dev.jsonl'], at: undefined, source: undefined }, { bytes: hotpotDev.length, checkedBy: 'sha256', sha256: sha256(hotpotDev), commit: hub.commit, revision: 'main', at: undefined, source: undefined });
  });

  it('a plain (non-LFS) file: no redirect, checked against the git blob sha1 in its ETag', async () => {
    const out = fresh();
    const r = await download('bamboogle', quick(out));
    const f = r.files[0]!;
    assert.equal(f.checkedBy, 'git-sha1');
    assert.equal(f.gitSha1, gitSha1(bamboogle));
    const qs = await collectAll(loadDataset(f.file));
    assert.equal(qs.length, 125);
    assert.equal(qs[0]!.question, 'Who was president of the United States in the year that Citibank was founded?');
  });

  it('a second run finds the file in place and sends no request; --force fetches it again', async () => {
    const out = fresh();
    await download('bamboogle', quick(out));
    const before = hub.log.length;
    const again = await download('bamboogle', quick(out));
    assert.equal(again.files[0]!.status, 'present');
    assert.equal(again.files[0]!.checkedBy, 'git-sha1');
    assert.equal(hub.log.length, before);
    const forced = await download('bamboogle', { ...quick(out), force: true });
    assert.equal(forced.files[0]!.status, 'downloaded');
    assert.equal(hub.log.length, before + 1);
  });

  it('a connection dropped mid-file: the run stops with the bytes kept, and the next run resumes with Range and finishes with the right bytes', async () => {
    const out = fresh();
    const cut = 250_000;
    hub.dropAfter('hotpotqa/dev.jsonl', cut);
    const part = join(out, 'hotpotqa', 'dev.jsonl.part');
    // How much of the cut-off body the client had read when the close arrived varies by a socket
    // buffer or so; what must hold is that the part holds exactly what was read, and the resume asks for the rest.
    let kept = 0;
    await assert.rejects(download('hotpotqa', { ...quick(out), retries: 0 }), (e: Error) => {
      assert.ok(e instanceof RagtrailError && !(e instanceof InputError));
      kept = statSync(part).size;
      const k = formatBytes(kept).replace('.', '\\.');
      assert.equal(formatBytes(hotpotDev.length), '640.8 kB');
      assert.match(e.message, new RegExp(`^hotpotqa/dev\\.jsonl: gave up after 1 attempt \\(the connection broke off at ${k} of 640\\.8 kB \\(ECONNRESET\\)\\)`));
      assert.match(e.message, new RegExp(`run the same command again: it resumes from the ${k} in .*dev\\.jsonl\\.part`));
      return true;
    });
    assert.ok(kept > 100_000 && kept <= cut, `kept ${kept}`);
    assert.ok(readFileSync(part).equals(hotpotDev.subarray(0, kept)));
    assert.ok(!existsSync(join(out, 'hotpotqa', 'dev.jsonl')), 'nothing under the final name before the check');
    const before = hub.log.length;
    const r = await download('hotpotqa', quick(out));
    const cdnReq = hub.log.slice(before).find((q) => q.server === 'cdn')!;
    assert.equal(cdnReq.range, `bytes=${kept}-`);
    assert.equal(r.files[0]!.resumedFrom, kept);
    assert.equal(r.files[0]!.checkedBy, 'sha256');
    assert.ok(readFileSync(join(out, 'hotpotqa', 'dev.jsonl')).equals(hotpotDev));
    assert.ok(!existsSync(part) && !existsSync(`${part}.json`));
  });

  it('drops within one run are retried, each attempt resuming where the last stopped', async () => {
    const out = fresh();
    hub.dropAfter('popqa/test.jsonl', 100_000, 2);
    const before = hub.log.length;
    const r = await download('popqa', quick(out));
    assert.equal(r.files[0]!.attempts, 3);
    const ranges = hub.log.slice(before).filter((q) => q.server === 'cdn').map((q) => q.range);
    assert.equal(ranges.length, 3);
    assert.equal(ranges[0], undefined);
    const [a, b] = ranges.slice(1).map((x) => Number(/^bytes=(\d+)-$/.exec(x ?? '')?.[1]));
    assert.ok(a! > 0 && a! <= 100_000 && b! > a! && b! <= a! + 100_000, `${ranges.join(' ')}`);
    assert.ok(readFileSync(r.files[0]!.file).equals(popqa));
    assert.equal((await collectAll(loadDataset(r.files[0]!.file))).length, 500);
  });

  it('a server that stalls mid-file times out and the retry resumes from the bytes it had sent', async () => {
    const out = fresh();
    hub.stallAfter('hotpotqa/dev.jsonl', 300_000);
    const notes: string[] = [];
    const t0 = performance.now();
    const r = await download('hotpotqa', { ...quick(out), timeoutMs: 300, log: (l) => notes.push(l) });
    assert.ok(performance.now() - t0 >= 300);
    assert.equal(r.files[0]!.attempts, 2);
    assert.deepEqual(notes, [
      'hotpotqa/dev.jsonl: the connection broke off at 300.0 kB of 640.8 kB (ETIMEDOUT); attempt 2 in 0.0 s',
      // The fixture is not the real HotpotQA dev file, so it differs from the pinned sha256: the Hub's own checksum decides.
      "hotpotqa/dev.jsonl: the Hub's file differs from the one ragtrail pinned (commit e011525); checked against the Hub's sha256",
    ]);
    assert.ok(readFileSync(r.files[0]!.file).equals(hotpotDev));
  });

  it('a checksum mismatch is a clear error and keeps nothing, neither the file nor the part', async () => {
    const out = fresh();
    hub.corrupt('bamboogle/test.jsonl');
    await assert.rejects(download('bamboogle', quick(out)), (e: Error) => {
      assert.ok(e instanceof ChecksumError);
      assert.match(e.message, new RegExp(`^bamboogle/test\\.jsonl: git blob sha1 mismatch: expected ${gitSha1(bamboogle)}, got [0-9a-f]{40}; the download was discarded`));
      return true;
    });
    assert.ok(!existsSync(join(out, 'bamboogle', 'test.jsonl')));
    assert.ok(!existsSync(join(out, 'bamboogle', 'test.jsonl.part')));
  });

  it("a server that states no checksum: ragtrail's pinned sha256 decides (and refuses a file that is not the pinned one)", async () => {
    hub.noChecksum('hotpotqa/dev.jsonl');
    const out = fresh();
    await assert.rejects(download('hotpotqa', quick(out)), (e: Error) => e instanceof ChecksumError && e.message.includes(`expected ${DOWNLOADS.hotpotqa.files[0]!.sha256} (pinned at commit e011525)`));
    assert.ok(!existsSync(join(out, 'hotpotqa', 'dev.jsonl')));
    // Without a pinned value it can only check the size, and says so.
    hub.noChecksum('nq/test.jsonl');
    const notes: string[] = [];
    const r = await download('nq', { ...quick(fresh()), log: (l) => notes.push(l) });
    assert.equal(r.files[0]!.checkedBy, 'size');
    assert.deepEqual(notes, ['nq/test.jsonl: the server states no checksum; checked by size only']);
  });

  it('a partial download of an older version is not spliced onto the new one', async () => {
    const out = fresh();
    const part = join(out, 'popqa', 'test.jsonl.part');
    hub.dropAfter('popqa/test.jsonl', 50_000);
    await assert.rejects(download('popqa', { ...quick(out), retries: 0 }));
    // The sidecar remembers the sha256 the part belongs to; pretend the Hub has since changed the file.
    const side = JSON.parse(readFileSync(`${part}.json`, 'utf8')) as { etag: string };
    writeFileSync(`${part}.json`, JSON.stringify({ ...side, etag: 'f'.repeat(64) }));
    const notes: string[] = [];
    const before = hub.log.length;
    const r = await download('popqa', { ...quick(out), log: (l) => notes.push(l) });
    assert.deepEqual(notes, ['popqa/test.jsonl: the file changed on the server since the partial download; starting it over']);
    const kept = JSON.stringify(hub.log.slice(before).filter((q) => q.server === 'cdn').map((q) => q.range));
    assert.match(kept, /^\["bytes=\d+-",null\]$/);
    assert.equal(r.files[0]!.resumedFrom, 0);
    assert.ok(readFileSync(r.files[0]!.file).equals(popqa));
  });

  it('a refused connection is the offline message, naming how to bring the files over by hand', async () => {
    const port = await closedPort();
    await assert.rejects(download('hotpotqa', { out: fresh(), endpoint: `http://127.0.0.1:${port}`, quiet: true }), (e: Error) => {
      assert.ok(e instanceof InputError);
      assert.match(e.message, new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): this machine looks offline`));
      assert.match(e.message, /ragtrail download hotpotqa --out DIR/);
      assert.match(e.message, new RegExp(`http://127\\.0\\.0\\.1:${port}/datasets/RUC-NLPIR/FlashRAG_datasets/resolve/main/hotpotqa/dev\\.jsonl`));
      assert.match(e.message, /ragtrail run --dataset .*hotpotqa\/dev\.jsonl/);
      return true;
    });
  });

  it('an unknown file or revision is a 404 naming the revision; an unknown split is refused before any request', async () => {
    await assert.rejects(download('hotpotqa', { ...quick(fresh()), splits: ['train'] }), (e: Error) => e instanceof InputError && /hotpotqa\/train\.jsonl is not in RUC-NLPIR\/FlashRAG_datasets at revision "main" \(HTTP 404/.test(e.message));
    await assert.rejects(download('hotpotqa', { ...quick(fresh()), splits: ['test'] }), /hotpotqa has no split "test" \(its splits are dev, train \(or all\)\)/);
    await assert.rejects(download('squad', quick(fresh())), /unknown download "squad" \(choose from hotpotqa, 2wikimultihopqa, musique, bamboogle, popqa, nq, triviaqa, wiki18, medqa, textbooks, statpearls\)/);
  });

  it('honours HF_ENDPOINT', async () => {
    const saved = process.env['HF_ENDPOINT'];
    process.env['HF_ENDPOINT'] = hub.endpoint;
    try {
      const r = await download('bamboogle', { out: fresh(), quiet: true });
      assert.equal(r.files[0]!.checkedBy, 'git-sha1');
    } finally {
      if (saved === undefined) delete process.env['HF_ENDPOINT'];
      else process.env['HF_ENDPOINT'] = saved;
    }
  });

  it('wiki18: the ZIP64 archive is fetched, checked, unpacked, and its wiki18_100w.jsonl reads as a corpus', async () => {
    const out = fresh();
    const r = await download('wiki18', quick(out));
    const f = r.files[0]!;
    assert.equal(f.path, 'retrieval-corpus/wiki18_100w.zip');
    assert.equal(f.checkedBy, 'sha256');
    assert.deepEqual(f.unpacked, [{ file: join(out, 'retrieval-corpus', 'wiki18_100w.jsonl'), bytes: wikiJsonl.length, extracted: true }]);
    assert.deepEqual(r.next, [`ragtrail index build --corpus ${join(out, 'retrieval-corpus', 'wiki18_100w.jsonl')} --out INDEX`]);
    const ps = await collectAll(readCorpus(join(out, 'retrieval-corpus', 'wiki18_100w.jsonl')));
    assert.equal(ps.length, passages.size);
    assert.equal(ps[0]!.title, [...passages.values()][0]);
    assert.ok(ps[0]!.text.length > 20 && !ps[0]!.text.startsWith('"'));
  });
});

describe('unzip', () => {
  const entries = [
    { name: 'a/b.jsonl', data: Buffer.from('{"id":"1","contents":"\\"T\\"\\nx"}\n'.repeat(2000)) },
    { name: 'stored.txt', data: Buffer.from('kept as is'), store: true },
    { name: 'empty.txt', data: Buffer.alloc(0) },
  ];
  for (const zip64 of [false, true]) {
    it(`extracts deflated, stored and empty entries${zip64 ? ' (ZIP64 records)' : ''}`, async () => {
      const dir = fresh();
      const zip = join(tmp.dir, `t${zip64 ? '64' : ''}.zip`);
      writeFileSync(zip, makeZip(entries, zip64));
      const listed = await readZipDirectory(zip);
      assert.deepEqual(listed.map((e) => [e.name, e.size, e.method]), [['a/b.jsonl', entries[0]!.data.length, 8], ['stored.txt', 10, 0], ['empty.txt', 0, 8]]);
      const got = await extractZip(zip, dir, { quiet: true });
      assert.deepEqual(got.map((g) => g.extracted), [true, true, true]);
      for (const e of entries) assert.ok(readFileSync(join(dir, e.name)).equals(e.data));
      assert.deepEqual((await extractZip(zip, dir, { quiet: true })).map((g) => g.extracted), [false, false, false]);
    });
  }

  it('a damaged entry (wrong CRC) leaves no output; a name escaping the folder is refused', async () => {
    const zip = makeZip([{ name: 'x.txt', data: Buffer.from('hello hello hello'), store: true }]);
    zip[30 + 'x.txt'.length + 2]! ^= 0xff; // a byte of the stored data
    const path = join(tmp.dir, 'bad.zip');
    writeFileSync(path, zip);
    const dir = fresh();
    await assert.rejects(extractZip(path, dir, { quiet: true }), /entry "x\.txt" came out wrong \(17 bytes, CRC-32 [0-9a-f]{8}; the archive says 17 bytes, CRC-32 [0-9a-f]{8}\)/);
    assert.ok(!existsSync(join(dir, 'x.txt')) && !existsSync(join(dir, 'x.txt.part')));
    const evil = join(tmp.dir, 'evil.zip');
    writeFileSync(evil, makeZip([{ name: '../outside.txt', data: Buffer.from('no') }]));
    await assert.rejects(extractZip(evil, fresh(), { quiet: true }), /entry "\.\.\/outside\.txt" would be written outside/);
  });

  it('a truncated archive is named as such', async () => {
    const path = join(tmp.dir, 'cut.zip');
    writeFileSync(path, makeZip(entries).subarray(0, 500));
    await assert.rejects(readZipDirectory(path), (e: Error) => e instanceof InputError && /not a readable zip archive \(no end-of-central-directory record/.test(e.message));
  });
});

describe('ragtrail download (CLI)', () => {
  const { runAsync } = cliRunner(ROOT);

  it('downloads, prints what it checked and the next command; offline exits 2 with one line', async () => {
    const out = fresh();
    const r = await runAsync('download', 'bamboogle', 'popqa', '--out', out, '--endpoint', hub.endpoint, '--quiet');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`bamboogle/test\\.jsonl\\s+${bamboogle.length}\\s+git-sha1 ${gitSha1(bamboogle).slice(0, 12)}`));
    assert.match(r.stdout, new RegExp(`popqa/test\\.jsonl\\s+${popqa.length}\\s+sha256 ${sha256(popqa).slice(0, 12)}`));
    assert.match(r.stdout, /next: ragtrail run --dataset .*bamboogle\/test\.jsonl/);
    const port = await closedPort();
    const off = await runAsync('download', 'hotpotqa', '--out', fresh(), '--endpoint', `http://127.0.0.1:${port}`);
    assert.equal(off.status, 2);
    assert.equal(off.stderr.trim().split('\n').length, 1, off.stderr);
    assert.match(off.stderr, /^ragtrail: cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): this machine looks offline/);
    const list = await runAsync('download', '--list');
    assert.equal(list.status, 0);
    assert.match(list.stdout, /wiki18\s+corpus\*\s+retrieval-corpus\/wiki18_100w\.zip\s+5\.13 GB/);
  });
});
