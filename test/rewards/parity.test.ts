/**
 * The authors' own reward code, reproduced: every dev case of test/fixtures/data/parity (outputs of the
 * authors' functions on varied inputs, see each SOURCE.md) must come out exactly under
 * `--option compat=authors`, through the same path `ragtrail reward --texts` takes.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { episodeFromJson, episodeTrajectory } from '../../src/rewards/episode.js';
import { textProtocol } from '../../src/rewards/apply.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { arenaAuthorsExtract } from '../../src/rewards/arena.js';
import { proragAuthorsStepFormat } from '../../src/rewards/prorag.js';
import { reasonragAuthorsAnswer, reasonragProcessText } from '../../src/rewards/reasonrag.js';
import { searchR1AuthorsFormat } from '../../src/rewards/search-r1.js';
import { cliRunner, data, tempDir } from '../helpers.js';

type Case = Record<string, any>;
const cases = (set: string): Case[] =>
  readFileSync(data('parity', set, 'dev.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Case);

async function score(scheme: string, options: string[], c: Case) {
  const s = composeScheme(scheme, ['compat=authors', ...options]);
  const episode = episodeFromJson(c, { file: 'dev.jsonl', line: 0 });
  return s.compute({ trajectory: episodeTrajectory(episode, textProtocol(s)), episode });
}

/** Runs every case, collecting mismatches so a failure lists them all. */
async function matchAll(set: string, check: (c: Case) => Promise<string | undefined>): Promise<void> {
  const all = cases(set);
  const bad: string[] = [];
  for (const c of all) {
    const why = await check(c);
    if (why) bad.push(`${c['id']}: ${why}`);
  }
  assert.ok(all.length > 50, `${set}: dev set read`);
  assert.deepEqual(bad, [], `${set}: ${all.length - bad.length} of ${all.length} match`);
}

const same = (got: unknown, want: unknown, what: string) => (Object.is(got, want) || got === want ? undefined : `${what} ${JSON.stringify(got)} ≠ ${JSON.stringify(want)}`);

test('ARENA src/rewards.py: format, accuracy, relevance, bonus and total of every dev case', async () => {
  await matchAll('arena', async (c) => {
    const r = await score('arena', [], c);
    const e = c['expected'];
    const x = arenaAuthorsExtract(c['response']);
    return (
      same(r.components['format'], e.format, 'format') ??
      same(r.components['accuracy'], e.accuracy, 'accuracy') ??
      same(r.components['relevance'], e.relevance, 'relevance') ??
      same(r.components['bonus'], e.bonus, 'bonus') ??
      same(r.total, e.total, 'total') ??
      same(x.answer, e.extracted_answer, 'extract_answer') ??
      same(x.relevance, e.extracted_relevance, 'extract_support_ids')
    );
  });
});

test('ProRAG outcome_reward: total and its format term on every dev case (one gold string: the line\'s `answer`)', async () => {
  await matchAll('prorag_outcome', async (c) => {
    const r = await score('prorag-outcome', [], c);
    return same(r.total, c['expected'].total, 'total') ?? same(r.components['workflow'], c['expected'].format, 'format');
  });
});

test('ProRAG format_reward_step as committed returns −2 on every dev case', async () => {
  await matchAll('prorag_step_format', async (c) => same(proragAuthorsStepFormat(c['response']), c['expected'].step_format, 'step_format'));
});

test('Search-R1 qa_em.py compute_score_em on prompt + response, with each case\'s format_score', async () => {
  await matchAll('searchr1_qa_em', async (c) => {
    const r = await score('search-r1-em', [`format_score=${c['format_score']}`], c);
    return same(r.total, c['expected'].score, 'score') ?? same(r.components['answered'], c['expected'].extracted_answer === null ? 0 : 1, 'extracted');
  });
});

test('Search-R1 qa_em_format.py compute_score_em with each case\'s weights, and its format verdict', async () => {
  await matchAll('searchr1_qa_em_format', async (c) => {
    const p = c['params'];
    const opts = Object.entries(p).map(([k, v]) => `${k}=${v}`);
    const r = await score('search-r1-format', opts, c);
    const direct = searchR1AuthorsFormat((c['prompt'] ?? '') + c['response'], c['golden_answers'], { structure: p.structure_format_score, finalFormat: p.final_format_score, retrieval: p.retrieval_score });
    return same(r.total, c['expected'].score, 'score') ?? same(r.components['valid'], c['expected'].is_valid_format ? 1 : 0, 'valid') ?? same(direct.reason, c['expected'].format_reason, 'reason');
  });
});

test('ReasonRAG get_reward: F1 · 0.95^step with its extract_answer, and process_text of the raw reply', async () => {
  await matchAll('reasonrag_terminal', async (c) => {
    const r = await score('reasonrag-terminal', [`beta=${c['beta']}`], c);
    const fromRaw = await score('reasonrag-terminal', [`beta=${c['beta']}`, 'process=true'], { ...c, response: c['raw_response'] });
    return (
      same(r.total, c['expected'].reward, 'reward') ??
      same(r.components['f1'], c['expected'].f1, 'f1') ??
      same(reasonragAuthorsAnswer(c['response']), c['expected'].pred, 'pred') ??
      same(reasonragProcessText(c['raw_response']), c['response'], 'process_text') ??
      same(fromRaw.total, c['expected'].reward, 'reward from raw')
    );
  });
});

test('ragtrail reward --texts runs a parity file end to end and writes {id, total, components} per line', () => {
  const { dir, cleanup } = tempDir();
  try {
    const { run } = cliRunner(dir);
    const r = run('reward', '--texts', data('parity', 'arena', 'dev.jsonl'), '--scheme', 'arena', '--option', 'compat=authors', '--out', 'out.jsonl');
    assert.equal(r.status, 0, r.stderr);
    const rows = readFileSync(`${dir}/out.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const want = cases('arena');
    assert.equal(rows.length, want.length);
    rows.forEach((row, i) => {
      assert.equal(row.id, want[i]!['id']);
      assert.equal(row.total, want[i]!['expected'].total);
      assert.deepEqual(Object.keys(row.components), ['format', 'accuracy', 'relevance', 'bonus']);
    });
    const bad = run('reward', '--texts', data('parity', 'arena', 'dev.jsonl'), '--scheme', 'f1', '--out', 'x.jsonl');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--agent/);
    const both = run('reward', 'somewhere', '--texts', 'x.jsonl', '--scheme', 'em');
    assert.equal(both.status, 2);
  } finally {
    cleanup();
  }
});
