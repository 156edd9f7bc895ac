/**
 * MedQA end to end in `ragtrail download`, against loopback Hubs (hub-fixture.ts) standing in for the
 * two repositories RAG-Gym's MedQA comes from: GBaker/MedQA-USMLE-4-options (the questions, at the
 * pinned commit) and MedRAG/textbooks (the corpus: its chunk/ folder found with the Hub's tree API,
 * each file checked against the listing or the Hub's headers, the files joined into one corpus file
 * that `ragtrail index build` reads). StatPearls is not on the Hub: refused with how to build it.
 * MedRAG's chunk layout ({id, title, content, contents}, no final line break) is read by readCorpus.
 * No network.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { readCorpus } from '../../src/corpus/corpus.js';
import { loadDataset } from '../../src/corpus/dataset.js';
import { ChecksumError, download, DOWNLOADS, hubTreeUrl } from '../../src/corpus/download.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { cliRunner, collectAll, ROOT, tempDir } from '../helpers.js';
import { closedPort, gitSha1, type Hub, sha256, startHub } from './hub-fixture.js';

const tmp = tempDir();
after(tmp.cleanup);
let n = 0;
const fresh = () => join(tmp.dir, `out-${++n}`);

const MEDQA_REPO = 'GBaker/MedQA-USMLE-4-options';
const MEDQA_REV = '0fb93dd23a7339b6dcd27e241cb9b5eca62d4d18';
const TEXTBOOKS_REPO = 'MedRAG/textbooks';
const TEXTBOOKS_REV = '9c72838920a1323ffa867467d3f7aa7b36b0f994';

// MedQA's layout (the release's phrases_no_exclude_*.jsonl): the first three hand-written questions of
// test/fixtures/medqa/sample.jsonl (its fourth has a bad answer letter, for the loader's own tests).
const medqaTest = Buffer.from(readFileSync(join(ROOT, 'test', 'fixtures', 'medqa', 'sample.jsonl'), 'utf8').split('\n').slice(0, 3).join('\n') + '\n');
const medqaTrain = Buffer.from(readFileSync(join(ROOT, 'test', 'fixtures', 'medqa', 'sample.jsonl'), 'utf8').split('\n').slice(1, 2).join('\n') + '\n');

// MedRAG's chunk layout: the hand-written 3-line fixture (no final line break, as MedRAG writes them)
// and a second book made here, ending in a line break, so that the join is tested both ways.
const handWritten = readFileSync(join(ROOT, 'test', 'fixtures', 'medrag', 'chunk', 'Hand_Written.jsonl'));
const concat = (title: string, content: string) => `${title}. ${content}`;
const another = Buffer.from(
  [
    'Aspirin irreversibly inhibits cyclooxygenase and lowers mortality when given early in myocardial infarction.',
    'Metformin decreases hepatic gluconeogenesis and is first-line therapy for type 2 diabetes.',
  ]
    .map((content, i) => JSON.stringify({ id: `Another_Book_${i}`, title: 'Another_Book', content, contents: concat('Another_Book', content) }))
    .join('\n') + '\n',
);

let medqaHub: Hub;
let booksHub: Hub;
before(async () => {
  medqaHub = await startHub(
    [
      { path: 'phrases_no_exclude_test.jsonl', body: medqaTest, lfs: false },
      { path: 'phrases_no_exclude_train.jsonl', body: medqaTrain, lfs: true },
      { path: 'README.md', body: Buffer.from('card'), lfs: false },
    ],
    MEDQA_REPO,
  );
  booksHub = await startHub(
    [
      { path: 'README.md', body: Buffer.from('# The Textbooks Corpus in MedRAG\n'), lfs: false },
      { path: 'chunk/Hand_Written.jsonl', body: handWritten, lfs: true },
      { path: 'chunk/Another_Book.jsonl', body: another, lfs: false },
      // Neither is a chunk file of the folder: a file of another ending, and one in a subfolder.
      { path: 'chunk/notes.txt', body: Buffer.from('not a chunk file'), lfs: false },
      { path: 'chunk/old/Stale.jsonl', body: Buffer.from('{"id":"x","title":"t","content":"old"}\n'), lfs: false },
    ],
    TEXTBOOKS_REPO,
  );
});
after(async () => {
  await medqaHub.close();
  await booksHub.close();
});

const quick = (out: string, hub: Hub) => ({ out, endpoint: hub.endpoint, quiet: true, retryDelayMs: 5, log: () => undefined });

describe('MedQA questions from GBaker/MedQA-USMLE-4-options', () => {
  it('fetches the test split at the pinned commit to DIR/medqa/, checked by git blob sha1, and it loads as MedQA', async () => {
    const out = fresh();
    const before = medqaHub.log.length;
    const r = await download('medqa', quick(out, medqaHub));
    assert.equal(r.files.length, 1);
    const f = r.files[0]!;
    assert.equal(f.path, 'medqa/phrases_no_exclude_test.jsonl');
    assert.equal(f.file, join(out, 'medqa', 'phrases_no_exclude_test.jsonl'));
    assert.equal(f.bytes, medqaTest.length);
    assert.equal(f.checkedBy, 'git-sha1');
    assert.equal(f.gitSha1, gitSha1(medqaTest));
    assert.deepEqual(medqaHub.log.slice(before).map((q) => q.url), [`/datasets/${MEDQA_REPO}/resolve/${MEDQA_REV}/phrases_no_exclude_test.jsonl`]);
    assert.deepEqual(r.skippedSplits.map((s) => s.split), ['train']);
    assert.match(r.next[0]!, /^ragtrail run --dataset .*medqa\/phrases_no_exclude_test\.jsonl --index INDEX/);
    const qs = await collectAll(loadDataset(f.file));
    assert.equal(qs.length, 3);
    assert.deepEqual(qs[0]!.answers, ['B', 'Aspirin']);
    assert.equal(qs[0]!.type, 'multiple-choice');
    assert.deepEqual(Object.keys(qs[2]!.choices ?? {}), ['A', 'B', 'C', 'D', 'E']);
    const manifest = JSON.parse(readFileSync(join(out, 'ragtrail-download.json'), 'utf8')) as { files: Record<string, { source: string; revision: string }> };
    assert.equal(manifest.files['medqa/phrases_no_exclude_test.jsonl']!.source, `${medqaHub.endpoint}/datasets/${MEDQA_REPO}/resolve/${MEDQA_REV}/phrases_no_exclude_test.jsonl`);
    assert.equal(manifest.files['medqa/phrases_no_exclude_test.jsonl']!.revision, MEDQA_REV);
  });

  it('--split train fetches the LFS file (sha256); --revision overrides the pinned commit', async () => {
    const out = fresh();
    const before = medqaHub.log.length;
    const r = await download('medqa', { ...quick(out, medqaHub), splits: ['train'], revision: 'main' });
    assert.equal(r.files[0]!.path, 'medqa/phrases_no_exclude_train.jsonl');
    assert.equal(r.files[0]!.checkedBy, 'sha256');
    assert.equal(r.files[0]!.sha256, sha256(medqaTrain));
    assert.equal(medqaHub.log[before]!.url, `/datasets/${MEDQA_REPO}/resolve/main/phrases_no_exclude_train.jsonl`);
    assert.equal((await collectAll(loadDataset(r.files[0]!.file))).length, 1);
    await assert.rejects(download('medqa', { ...quick(fresh(), medqaHub), splits: ['dev'] }), /medqa has no split "dev" \(its splits are test, train \(or all\)\)/);
  });
});

describe('MedRAG/textbooks: the chunk files listed with the tree API, fetched and joined', () => {
  it('lists chunk/ page by page, fetches the .jsonl files to DIR/textbooks/chunk/, and joins them into the corpus file', async () => {
    const out = fresh();
    booksHub.pageListings(2);
    const before = booksHub.log.length;
    let r;
    try {
      r = await download('textbooks', { ...quick(out, booksHub), token: 'hf_test_token' });
    } finally {
      booksHub.pageListings(Infinity);
    }
    const reqs = booksHub.log.slice(before);
    // Two pages of the listing (4 entries: two chunk files, notes.txt, the old/ folder), then the two files (one through the CDN).
    assert.deepEqual(
      reqs.filter((q) => q.server === 'hub').map((q) => q.url),
      [
        `/api/datasets/${TEXTBOOKS_REPO}/tree/${TEXTBOOKS_REV}/chunk`,
        `/api/datasets/${TEXTBOOKS_REPO}/tree/${TEXTBOOKS_REV}/chunk?cursor=2`,
        `/datasets/${TEXTBOOKS_REPO}/resolve/${TEXTBOOKS_REV}/chunk/Another_Book.jsonl`,
        `/datasets/${TEXTBOOKS_REPO}/resolve/${TEXTBOOKS_REV}/chunk/Hand_Written.jsonl`,
      ],
    );
    assert.ok(reqs.filter((q) => q.server === 'hub').every((q) => q.authorization === 'Bearer hf_test_token'));
    assert.equal(reqs.find((q) => q.server === 'cdn')!.authorization, undefined, 'the token must not travel to the CDN');
    assert.deepEqual(
      r.files.map((f) => [f.path, f.bytes, f.checkedBy, f.status]),
      [
        ['textbooks/chunk/Another_Book.jsonl', another.length, 'git-sha1', 'downloaded'],
        ['textbooks/chunk/Hand_Written.jsonl', handWritten.length, 'sha256', 'downloaded'],
      ],
    );
    assert.ok(readFileSync(join(out, 'textbooks', 'chunk', 'Hand_Written.jsonl')).equals(handWritten));
    assert.ok(!existsSync(join(out, 'textbooks', 'chunk', 'notes.txt')) && !existsSync(join(out, 'textbooks', 'chunk', 'old')));
    // Joined in name order; Hand_Written.jsonl, which ends without a line break, gets one.
    const joined = join(out, 'textbooks', 'textbooks.jsonl');
    assert.equal(handWritten.at(-1), 0x7d);
    assert.deepEqual(r.joined, { file: joined, bytes: another.length + handWritten.length + 1, parts: 2, written: true });
    assert.ok(readFileSync(joined).equals(Buffer.concat([another, handWritten, Buffer.from('\n')])));
    assert.deepEqual(r.next, [`ragtrail index build --corpus ${joined} --out INDEX`]);
    const ps = await collectAll(readCorpus(joined));
    assert.deepEqual(ps.map((p) => p.id), ['Another_Book_0', 'Another_Book_1', 'Hand_Written_0', 'Hand_Written_1', 'Hand_Written_2']);
    // The listing is kept, so the next run asks nothing.
    const manifest = JSON.parse(readFileSync(join(out, 'ragtrail-download.json'), 'utf8')) as { listings: Record<string, unknown[]> };
    assert.deepEqual(manifest.listings[`${TEXTBOOKS_REPO}@${TEXTBOOKS_REV}:chunk`], [
      { repoPath: 'chunk/Another_Book.jsonl', bytes: another.length, gitSha1: gitSha1(another) },
      { repoPath: 'chunk/Hand_Written.jsonl', bytes: handWritten.length, sha256: sha256(handWritten) },
    ]);
    const again = booksHub.log.length;
    const r2 = await download('textbooks', { ...quick(out, booksHub), endpoint: `http://127.0.0.1:${await closedPort()}` });
    assert.equal(booksHub.log.length, again);
    assert.deepEqual(r2.files.map((f) => f.status), ['present', 'present']);
    assert.deepEqual(r2.joined, { file: joined, bytes: another.length + handWritten.length + 1, parts: 2, written: false });
  });

  it('a listing that fails with 503 is retried; a folder that is not there is a 404 naming the revision', async () => {
    booksHub.failListing(503, 1);
    const notes: string[] = [];
    const r = await download('textbooks', { ...quick(fresh(), booksHub), log: (l) => notes.push(l) });
    assert.equal(r.files.length, 2);
    assert.match(notes[0]!, /^listing chunk\/: HTTP 503 from .*\/api\/datasets\/MedRAG\/textbooks\/tree\/9c72838920a1323ffa867467d3f7aa7b36b0f994\/chunk; attempt 2 in 0\.0 s$/);
    // The MedQA Hub has no MedRAG/textbooks repository.
    await assert.rejects(download('textbooks', quick(fresh(), medqaHub)), (e: Error) => e instanceof InputError && /^chunk\/ is not in MedRAG\/textbooks at revision "9c72838920a1323ffa867467d3f7aa7b36b0f994" \(HTTP 404/.test(e.message));
  });

  it('a server that states no checksum: the listing\'s git blob sha1 or sha256 decides, and a corrupted file is refused', async () => {
    booksHub.noChecksum('chunk/Another_Book.jsonl');
    booksHub.noChecksum('chunk/Hand_Written.jsonl');
    const r = await download('textbooks', quick(fresh(), booksHub));
    assert.deepEqual(r.files.map((f) => [f.checkedBy, f.gitSha1 ?? f.sha256]), [['git-sha1', gitSha1(another)], ['sha256', sha256(handWritten)]]);
    booksHub.noChecksum('chunk/Another_Book.jsonl');
    booksHub.corrupt('chunk/Another_Book.jsonl');
    const out = fresh();
    await assert.rejects(download('textbooks', quick(out, booksHub)), (e: Error) => {
      assert.ok(e instanceof ChecksumError);
      assert.match(e.message, new RegExp(`^textbooks/chunk/Another_Book\\.jsonl: git blob sha1 mismatch: expected ${gitSha1(another)} \\(from the Hub's file listing\\), got [0-9a-f]{40}; the download was discarded`));
      return true;
    });
    assert.ok(!existsSync(join(out, 'textbooks', 'textbooks.jsonl')), 'no corpus file from a failed download');
  });
});

describe("MedRAG's chunk layout read as a corpus and indexed", () => {
  it('the 3-line fixture reads as 3 passages with MedRAG\'s title and content', async () => {
    const ps = await collectAll(readCorpus(join(ROOT, 'test', 'fixtures', 'medrag', 'chunk', 'Hand_Written.jsonl')));
    assert.equal(ps.length, 3);
    assert.deepEqual(ps[1], {
      id: 'Hand_Written_1',
      title: 'Hand_Written',
      text: 'Scurvy results from vitamin C deficiency, which impairs the hydroxylation of proline and lysine in collagen synthesis.',
    });
    assert.ok(ps.every((p) => p.title === 'Hand_Written' && !p.text.startsWith('Hand_Written')));
  });

  it('the downloaded corpus file builds an index whose search finds the right chunk', async () => {
    const out = fresh();
    const r = await download('textbooks', quick(out, booksHub));
    const idx = join(tmp.dir, 'textbooks-index');
    const m = await buildIndex(r.joined!.file, idx, { bm25: true, quiet: true });
    assert.equal(m.passages, 5);
    const retriever = await openRetriever(idx);
    try {
      const [hit] = await retriever.search('which nerve injury causes wrist drop', 1);
      assert.deepEqual({ ...hit!, score: undefined }, {
        passageId: 'Hand_Written_0',
        title: 'Hand_Written',
        text: 'The radial nerve innervates the extensors of the wrist and fingers; injury at the spiral groove of the humerus causes wrist drop.',
        score: undefined,
      });
      assert.equal((await retriever.search('metformin gluconeogenesis', 1))[0]!.passageId, 'Another_Book_1');
    } finally {
      await retriever.close?.();
    }
  });
});

describe('offline, StatPearls, --list', () => {
  it('offline: one line naming the tree listing and the corpus file to copy (textbooks), or the question file (medqa)', async () => {
    const port = await closedPort();
    const out = fresh();
    await assert.rejects(download('textbooks', { out, endpoint: `http://127.0.0.1:${port}`, quiet: true }), (e: Error) => {
      assert.ok(e instanceof InputError);
      assert.ok(!e.message.includes('\n'));
      assert.match(e.message, new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): this machine looks offline`));
      assert.ok(e.message.includes(hubTreeUrl(`http://127.0.0.1:${port}`, TEXTBOOKS_REPO, TEXTBOOKS_REV, 'chunk')));
      assert.ok(e.message.includes('`ragtrail download textbooks --out DIR` there'));
      assert.ok(e.message.includes(`copy DIR/textbooks/textbooks.jsonl to ${join(out, 'textbooks', 'textbooks.jsonl')}`));
      assert.ok(e.message.includes(`\`ragtrail index build --corpus ${join(out, 'textbooks', 'textbooks.jsonl')} --out INDEX\``));
      return true;
    });
    await assert.rejects(download('medqa', { out, endpoint: `http://127.0.0.1:${port}`, quiet: true }), (e: Error) => {
      assert.ok(e instanceof InputError && !e.message.includes('\n'));
      assert.ok(e.message.includes(`http://127.0.0.1:${port}/datasets/${MEDQA_REPO}/resolve/${MEDQA_REV}/phrases_no_exclude_test.jsonl`));
      assert.ok(e.message.includes(`\`ragtrail run --dataset ${join(out, 'medqa', 'phrases_no_exclude_test.jsonl')} …\``));
      return true;
    });
  });

  it('statpearls is refused with how to build it, in one line', async () => {
    await assert.rejects(download('statpearls', quick(fresh(), booksHub)), (e: Error) => {
      assert.ok(e instanceof InputError && !e.message.includes('\n'));
      assert.match(e.message, /^statpearls is not on the Hub as files: StatPearls may not be redistributed, so MedRAG\/statpearls holds only its dataset card \(build it: git clone https:\/\/github\.com\/Teddy-XiongGZ\/MedRAG && /);
      assert.ok(e.message.includes('wget -P corpus/statpearls https://ftp.ncbi.nlm.nih.gov/pub/litarch/3d/12/statpearls_NBK430685.tar.gz'));
      assert.ok(e.message.includes('python src/data/statpearls.py && awk 1 corpus/statpearls/chunk/*.jsonl > statpearls.jsonl'));
      return true;
    });
  });

  it('the sets name their repositories and pinned commits', () => {
    assert.deepEqual(
      ['medqa', 'textbooks', 'statpearls'].map((k) => {
        const s = DOWNLOADS[k as 'medqa' | 'textbooks' | 'statpearls'];
        return [s.repo, 'revision' in s ? s.revision : undefined];
      }),
      [[MEDQA_REPO, MEDQA_REV], [TEXTBOOKS_REPO, TEXTBOOKS_REV], ['MedRAG/statpearls', undefined]],
    );
  });

  describe('ragtrail download (CLI)', () => {
    const { runAsync } = cliRunner(ROOT);

    it('--list shows the MedQA sets with sizes and what they are for; statpearls with its build line', async () => {
      const list = await runAsync('download', '--list');
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /\nmedqa\s+test\*\s+medqa\/phrases_no_exclude_test\.jsonl\s+~2\.08 MB\n/);
      assert.match(list.stdout, /\nmedqa\s+train\s+medqa\/phrases_no_exclude_train\.jsonl\s+~16\.2 MB\n/);
      assert.match(list.stdout, /\ntextbooks\s+corpus\*\s+textbooks\/chunk\/\*\.jsonl \(18 files\) → textbooks\/textbooks\.jsonl\s+~212 MB\n/);
      assert.match(list.stdout, /\nstatpearls\s+corpus\*\s+\(built, not downloaded: see below\)\s+–\n/);
      assert.match(list.stdout, /\nmedqa: MedQA USMLE 4-option questions, RAG-Gym's fourth benchmark: .* \[GBaker\/MedQA-USMLE-4-options@0fb93dd\]\n/);
      assert.match(list.stdout, /\ntextbooks: MedRAG's Textbooks corpus .* \[MedRAG\/textbooks@9c72838\]\n/);
      assert.match(list.stdout, /\nstatpearls: MedRAG's StatPearls corpus .*; build it: git clone https:\/\/github\.com\/Teddy-XiongGZ\/MedRAG && .* > statpearls\.jsonl\n?$/);
      // The FlashRAG sets are listed as before.
      assert.match(list.stdout, /wiki18\s+corpus\*\s+retrieval-corpus\/wiki18_100w\.zip\s+5\.13 GB/);
    });

    it('downloads medqa and textbooks in one command, prints the joined corpus and the next commands; statpearls and offline exit 2 with one line', async () => {
      const out = fresh();
      // One endpoint per command: the textbooks from their Hub, then MedQA from its.
      const books = await runAsync('download', 'textbooks', '--out', out, '--endpoint', booksHub.endpoint, '--quiet');
      assert.equal(books.status, 0, books.stderr);
      assert.match(books.stdout, new RegExp(`textbooks/chunk/Hand_Written\\.jsonl\\s+${handWritten.length}\\s+sha256 ${sha256(handWritten).slice(0, 12)}`));
      assert.match(books.stdout, new RegExp(`→ .*textbooks/textbooks\\.jsonl\\s+${another.length + handWritten.length + 1}\\s+2 files joined\\s+joined`));
      assert.match(books.stdout, /next: ragtrail index build --corpus .*textbooks\/textbooks\.jsonl --out INDEX/);
      const qs = await runAsync('download', 'medqa', '--split', 'all', '--out', out, '--endpoint', medqaHub.endpoint, '--quiet');
      assert.equal(qs.status, 0, qs.stderr);
      assert.match(qs.stdout, new RegExp(`medqa/phrases_no_exclude_test\\.jsonl\\s+${medqaTest.length}\\s+git-sha1 ${gitSha1(medqaTest).slice(0, 12)}`));
      assert.match(qs.stdout, /medqa\/phrases_no_exclude_train\.jsonl\s+\d+\s+sha256 /);
      const before = medqaHub.log.length;
      const sp = await runAsync('download', 'medqa', 'statpearls', '--out', fresh(), '--endpoint', medqaHub.endpoint);
      assert.equal(sp.status, 2);
      assert.equal(sp.stderr.trim().split('\n').length, 1, sp.stderr);
      assert.match(sp.stderr, /^ragtrail: statpearls is not on the Hub as files: .*\(build it: git clone https:\/\/github\.com\/Teddy-XiongGZ\/MedRAG && /);
      assert.equal(medqaHub.log.length, before, 'nothing fetched before the refusal');
      const port = await closedPort();
      const off = await runAsync('download', 'textbooks', '--out', fresh(), '--endpoint', `http://127.0.0.1:${port}`);
      assert.equal(off.status, 2);
      assert.equal(off.stderr.trim().split('\n').length, 1, off.stderr);
      assert.match(off.stderr, /^ragtrail: cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): this machine looks offline.*\/api\/datasets\/MedRAG\/textbooks\/tree\/9c72838920a1323ffa867467d3f7aa7b36b0f994\/chunk lists them/);
    });
  });
});
