/**
 * Corruption is detected, never read as data (issue 49): every file of an index, the manifest itself,
 * gym policies and PRM files carry checksums; a truncated or bit-flipped file is one line naming it and
 * the rebuild, on open (exit 2) and in `ragtrail index verify` (exit 1). Indexes, policies and PRMs
 * written before checksums still load.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sumFile } from '../../src/core/checksum.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { getProtocol } from '../../src/agents/registry.js';
import { GymPolicy } from '../../src/learn/gym/policy.js';
import { ScoreModel } from '../../src/prm/model.js';
import { PRM_FORMAT_VERSION, TrainedPRM } from '../../src/prm/trained.js';
import { Rng } from '../../src/core/rng.js';
import { createEmbedder } from '../../src/retrieval/embedders/embedder.js';
import { buildIndex, type IndexManifest, openRetriever } from '../../src/retrieval/index-dir.js';
import { DamagedFileError } from '../../src/retrieval/integrity.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const { run } = cliRunner(tmp.dir);
const index = join(tmp.dir, 'idx');
const rebuild = '`ragtrail index build --corpus world/corpus.jsonl --out idx --bm25 --dense --embedder hash:64 --force`';
/** The same command as named in this process, whose working folder is not tmp.dir. */
const corpusHere = () => relative(process.cwd(), join(tmp.dir, 'world', 'corpus.jsonl'));
const rebuildHere = () => rebuild.replace('world/corpus.jsonl', corpusHere()).replace('--out idx', `--out ${index}`);

/** Flips the lowest bit of the byte at `offset` (from the end when negative). */
function flip(path: string, offset: number): void {
  const bytes = readFileSync(path);
  const at = offset < 0 ? bytes.length + offset : offset;
  bytes[at] = bytes[at]! ^ 1;
  writeFileSync(path, bytes);
}

/** Runs `damage` on a file, checks the index with `check`, then puts the file back as built. */
async function damaged(rel: string, damage: (path: string) => void, check: () => Promise<void> | void): Promise<void> {
  const path = join(index, rel);
  const saved = readFileSync(path);
  damage(path);
  try {
    await check();
  } finally {
    writeFileSync(path, saved);
  }
}

const openFails = (rel: string, why: RegExp) => async () => {
  await assert.rejects(openRetriever(index, { method: 'hybrid' }), (e: Error) => {
    assert.ok(e instanceof DamagedFileError, e.message);
    assert.equal(e.path, join(index, rel));
    assert.match(e.why, why);
    assert.ok(e.message.endsWith(`rebuild it with ${rebuildHere()}`), e.message);
    return true;
  });
};

before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 400, questions: 10 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), index, { bm25: true, embedder: await createEmbedder('hash:64'), quiet: true });
});

describe('index checksums', () => {
  it('records the size and SHA-256 of every file the searches read, and a checksum of the manifest', () => {
    const m = JSON.parse(readFileSync(join(index, 'index.json'), 'utf8')) as IndexManifest;
    const files = Object.keys(m.files!);
    for (const f of ['docs.jsonl', 'docs.off', 'bm25/meta.json', 'bm25/postings.bin', 'bm25/terms.bin', 'dense/meta.json', 'dense/vectors.f32']) assert.ok(files.includes(f), f);
    assert.ok(!files.some((f) => f.endsWith('progress.json') || f.endsWith('.partial') || f === 'index.json'));
    assert.deepEqual(m.files!['bm25/postings.bin'], sumFile(join(index, 'bm25', 'postings.bin')));
    assert.match(m.checksum!, /^sha256:[0-9a-f]{64}$/);
  });

  it('a truncated or bit-flipped file of each kind is named on open with the rebuild command', async () => {
    await damaged('docs.off', (p) => truncateSync(p, statSync(p).size - 8), openFails('docs.off', /^\d+ bytes, built with \d+: truncated$/));
    // One bit of one offset: same size, so only the checksum sees it (the whole small index is hashed on open).
    await damaged('docs.off', (p) => flip(p, 16), openFails('docs.off', /^checksum mismatch$/));
    await damaged('docs.jsonl', (p) => flip(p, 200), openFails('docs.jsonl', /^checksum mismatch$/));
    await damaged('bm25/postings.bin', (p) => flip(p, 100), openFails('bm25/postings.bin', /^checksum mismatch$/));
    await damaged('bm25/meta.json', (p) => writeFileSync(p, readFileSync(p, 'utf8').replace('"k1": 0.9', '"k1": 0.1')), openFails('bm25/meta.json', /^checksum mismatch$/));
    // The lowest mantissa bit of a float: still a vector, a slightly wrong one.
    await damaged('dense/vectors.f32', (p) => flip(p, 4 * 64 * 7), openFails('dense/vectors.f32', /^checksum mismatch$/));
    await damaged('dense/vectors.f32', (p) => truncateSync(p, statSync(p).size - 4), openFails('dense/vectors.f32', /^\d+ bytes, built with \d+: truncated$/));
    await damaged('bm25/skips.bin', (p) => writeFileSync(p, Buffer.concat([readFileSync(p), Buffer.alloc(8)])), openFails('bm25/skips.bin', /grown or replaced/));
    // Only the parts a search uses are checked: BM25 search still opens over a damaged dense part.
    await damaged('dense/vectors.f32', (p) => flip(p, 0), async () => assert.equal((await (await openRetriever(index, { method: 'bm25' })).search('born', 3)).length, 3));
  });

  it('a flipped digit in index.json (still valid JSON) is caught by its own checksum; a torn one is named', async () => {
    const manifest = join(index, 'index.json');
    await damaged('index.json', (p) => writeFileSync(p, readFileSync(p, 'utf8').replace(/"passages": (\d+)/, (_, n) => `"passages": ${Number(n) ^ 1}`)), async () => {
      await assert.rejects(openRetriever(index), (e: Error) => e instanceof DamagedFileError && e.message === `${manifest} is damaged (checksum mismatch): rebuild the index with \`ragtrail index build --corpus ${corpusHere()} --out ${index} --force\` and the options it was built with`);
    });
    await damaged('index.json', (p) => truncateSync(p, 300), async () => {
      await assert.rejects(openRetriever(index), (e: Error) => e.message.startsWith(`${manifest}: not valid JSON (`) && e.message.endsWith('(rebuild the index with `ragtrail index build --force`)'));
    });
  });

  it('the CLI: a damaged file is one line and exit 2 on search; index verify lists every file, exit 0 sound and 1 damaged', async () => {
    const good = run('index', 'verify', 'idx');
    assert.equal(good.status, 0, good.stderr);
    const lines = good.stdout.trim().split('\n');
    assert.equal(lines[0], 'OK       idx/index.json (its own checksum)');
    assert.match(lines.at(-1)!, /^idx: all (\d+) files sound \([\d.]+ KiB checked in [\d.]+ s\)$/);
    assert.equal(lines.length, Number(/all (\d+) files/.exec(lines.at(-1)!)![1]) + 1);
    assert.ok(lines.includes('OK       idx/bm25/postings.bin (' + (statSync(join(index, 'bm25', 'postings.bin')).size / 1024).toFixed(1) + ' KiB)'));

    await damaged('bm25/postings.bin', (p) => flip(p, -1), async () => {
      const search = run('search', '--index', 'idx', 'born');
      assert.equal(search.status, 2);
      assert.equal(search.stderr, `ragtrail: idx/bm25/postings.bin is damaged (checksum mismatch): rebuild it with ${rebuild}\n`);
      const verify = run('index', 'verify', 'idx');
      assert.equal(verify.status, 1);
      assert.match(verify.stdout, /^DAMAGED {2}idx\/bm25\/postings\.bin: checksum mismatch$/m);
      assert.equal(verify.stdout.split('\n').filter((l) => l.startsWith('DAMAGED')).length, 1);
      assert.equal(verify.stderr, `ragtrail: idx: 1 of ${lines.length - 1} files damaged (bm25/postings.bin): rebuild it with ${rebuild}\n`);
    });
    await damaged('index.json', (p) => writeFileSync(p, readFileSync(p, 'utf8').replace('"k1": 0.9', '"k1": 0.8')), () => {
      const verify = run('index', 'verify', 'idx');
      assert.equal(verify.status, 1);
      assert.equal(verify.stdout, 'DAMAGED  idx/index.json\n');
      assert.match(verify.stderr, /^ragtrail: idx\/index\.json is damaged \(checksum mismatch\): rebuild the index with `ragtrail index build --corpus world\/corpus\.jsonl --out idx --force` and the options it was built with\n$/);
    });
  });

  it('an index built before checksums opens as before, and index verify says it cannot check it', async () => {
    await damaged('index.json', (p) => {
      const { files: _f, checksum: _c, ...older } = JSON.parse(readFileSync(p, 'utf8')) as IndexManifest;
      writeFileSync(p, JSON.stringify(older));
    }, async () => {
      flip(join(index, 'bm25', 'postings.bin'), -1); // unseen without checksums: that is what they add
      try {
        assert.equal((await (await openRetriever(index)).search('born', 3)).length, 3);
        const verify = run('index', 'verify', 'idx');
        assert.equal(verify.status, 0, verify.stderr);
        assert.equal(verify.stdout, `idx was built without checksums (by an older ragtrail): index verify cannot check its files; rebuild it with ${rebuild} to add them\n`);
      } finally {
        flip(join(index, 'bm25', 'postings.bin'), -1);
      }
    });
  });
});

describe('policy and PRM file checksums', () => {
  const protocol = getProtocol('reasonrag');
  const policyFile = join(tmp.dir, 'policy.json');
  const prmFile = join(tmp.dir, 'prm.json');
  before(() => {
    GymPolicy.fresh(protocol).save(policyFile, [{ algo: 'none' }]);
    const model = ScoreModel.init('linear', 4, 0, new Float64Array(4), new Float64Array(4).fill(1), new Rng(0));
    const saved = { format: 'ragtrail-prm' as const, version: PRM_FORMAT_VERSION, embedder: 'hash:64', features: ['a', 'b', 'c', 'd'], model: model.toJSON(), training: { pairs: 0, heldOut: 0, trainAccuracy: 0, losses: [] } };
    new TrainedPRM(saved, model, undefined as never).save(prmFile);
  });

  /** A weight 0 → 1: valid JSON, a different model. */
  const flipWeight = (p: string) => writeFileSync(p, readFileSync(p, 'utf8').replace(/("params":\[)0/, '$11'));

  it('load what they saved; a flipped weight, a truncated file or an empty one is named with the fix', async () => {
    assert.match(JSON.parse(readFileSync(policyFile, 'utf8')).checksum, /^sha256:[0-9a-f]{64}$/);
    assert.equal(GymPolicy.load(policyFile).model.dim, GymPolicy.fresh(protocol).model.dim);
    assert.equal((await TrainedPRM.load(prmFile)).saved.embedder, 'hash:64');
    const policyFix = "retrain it (`ragtrail train … --policy-out FILE`; in a pipeline run, delete that stage's folder and re-run the pipeline)";
    const prmFix = "retrain it (`ragtrail prm train … --out FILE`; in a pipeline run, delete that stage's folder and re-run the pipeline)";
    for (const [damage, why] of [[flipWeight, 'checksum mismatch'], [(p: string) => truncateSync(p, statSync(p).size - 20), 'not complete JSON: truncated?'], [(p: string) => truncateSync(p, 0), 'empty']] as const) {
      for (const [file, load, fix] of [[policyFile, async () => GymPolicy.load(policyFile), policyFix], [prmFile, () => TrainedPRM.load(prmFile), prmFix]] as const) {
        const saved = readFileSync(file);
        damage(file);
        await assert.rejects(load(), (e: Error) => e.message === `${file} is damaged (${why}): ${fix}`);
        writeFileSync(file, saved);
      }
    }
  });

  it('files written before checksums still load', async () => {
    for (const file of [policyFile, prmFile]) {
      const { checksum: _c, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify(older));
    }
    assert.equal(GymPolicy.load(policyFile).protocol.name, 'reasonrag');
    assert.equal((await TrainedPRM.load(prmFile)).saved.format, 'ragtrail-prm');
  });

  it('the CLI: a damaged PRM or policy file is one line and exit 2', () => {
    GymPolicy.fresh(protocol).save(policyFile);
    flipWeight(policyFile);
    const r = run('run', '--policy', 'gym:policy.json', '--agent', 'reasonrag', '--index', 'idx', '--dataset', 'world/questions.jsonl', '--limit', '1', '--out', 'run');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^ragtrail: policy\.json is damaged \(checksum mismatch\): retrain it .*\n$/);
    const model = ScoreModel.init('linear', 4, 0, new Float64Array(4), new Float64Array(4).fill(1), new Rng(0));
    new TrainedPRM({ format: 'ragtrail-prm', version: PRM_FORMAT_VERSION, embedder: 'hash:64', features: [], model: model.toJSON(), training: { pairs: 0, heldOut: 0, trainAccuracy: 0, losses: [] } }, model, undefined as never).save(prmFile);
    truncateSync(prmFile, 30);
    const e = run('prm', 'eval', '--model', 'prm.json', '--pairs', 'none.jsonl');
    assert.equal(e.status, 2);
    assert.match(e.stderr, /^ragtrail: prm\.json is damaged \(not complete JSON: truncated\?\): retrain it .*\n$/);
  });
});

describe('records files (trees.jsonl, trajectories.jsonl) cut or garbled', () => {
  it('a torn or non-JSON line is an error naming file:line, never a record read short', async () => {
    const { readTrees } = await import('../../src/process/tree.js');
    const { readTrajectories } = await import('../../src/eval/trajectories.js');
    const dir = join(tmp.dir, 'records');
    mkdirSync(dir);
    const line = (i: number) => JSON.stringify({ id: `q${i}`, question: 'who?', answers: ['x'], prediction: 'x', steps: [] });
    for (const [file, read] of [['trees.jsonl', () => readTrees(dir)], ['trajectories.jsonl', () => readTrajectories(dir)]] as const) {
      const path = join(dir, file);
      // Cut in the middle of the last record (a copy stopped short), then one byte of the second garbled.
      writeFileSync(path, [line(1), line(2), line(3)].join('\n').slice(0, -20));
      await assert.rejects(read(), (e: Error) => e.message.startsWith(`${path}:3: invalid JSON (`) && e.message.endsWith('(fix or remove that line)'));
      writeFileSync(path, [line(1), line(2).replace('{"id"', '{"id"\u0000'), line(3)].join('\n') + '\n');
      await assert.rejects(read(), (e: Error) => e.message.startsWith(`${path}:2: invalid JSON (`));
    }
  });
});
