/**
 * Issue 45: the adversarial dev quarter (test/fixtures/data/parity2, copies of ../shared/data/parity2: Unicode,
 * odd numbers and JSON, odd tree ids, inputs on which the authors' code raises), with parity/ alongside, scored
 * as a user scores them: each file in one call (`scoreTexts`, the path of `reward --texts`; `relabel`, the
 * path of `annotate relabel`), every output line compared with `expected`. Sets whose cases vary a scheme
 * option (beta, format_score, the qa_em_format weights) are split into one file per option set first, as
 * runs made with different settings would be. A line the authors' code raises on must come back as an
 * error record naming the Python exception; every other line must match to 1e-9.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { scoreTexts } from '../../src/rewards/apply.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { relabel } from '../../src/process/relabel.js';
import { cliRunner, data, tempDir } from '../helpers.js';

type Case = Record<string, any>;
const lines = (path: string): Case[] => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Case);
const cases = (dir: string, set: string) => lines(data(dir, set, 'dev.jsonl'));

const close = (a: unknown, b: unknown) => a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-9);
const same = (got: unknown, want: unknown, what: string) => (close(got, want) ? undefined : `${what} ${JSON.stringify(got)} ≠ ${JSON.stringify(want)}`);

interface TextSet {
  set: string;
  scheme: string;
  /** The scheme options a case was produced with (one call per distinct set of options). */
  options: (c: Case) => string[];
  /** The line as given to ragtrail (the raw reply where the set records one). */
  input?: (c: Case) => Case;
  check: (row: Case, c: Case) => string | undefined;
}

const TEXT_SETS: TextSet[] = [
  {
    set: 'arena',
    scheme: 'arena',
    options: () => [],
    check: (r, c) =>
      ['format', 'accuracy', 'relevance', 'bonus'].map((k) => same(r['components']?.[k], c['expected'][k], k)).find(Boolean) ?? same(r['total'], c['expected'].total, 'total'),
  },
  {
    set: 'prorag_outcome',
    scheme: 'prorag-outcome',
    options: () => [],
    check: (r, c) => same(r['total'], c['expected'].total, 'total') ?? same(r['components']?.['workflow'], c['expected'].format, 'format'),
  },
  {
    set: 'searchr1_qa_em',
    scheme: 'search-r1-em',
    options: (c) => [`format_score=${c['format_score'] ?? 0}`],
    check: (r, c) => same(r['total'], c['expected'].score, 'score'),
  },
  {
    set: 'searchr1_qa_em_format',
    scheme: 'search-r1-format',
    options: (c) => Object.entries(c['params'] as Record<string, number>).map(([k, v]) => `${k}=${v}`),
    check: (r, c) => same(r['total'], c['expected'].score, 'score') ?? same(r['components']?.['valid'], c['expected'].is_valid_format ? 1 : 0, 'valid'),
  },
  {
    set: 'reasonrag_terminal',
    scheme: 'reasonrag-terminal',
    options: (c) => [`beta=${c['beta']}`],
    check: (r, c) => same(r['total'], c['expected'].reward, 'reward') ?? same(r['components']?.['f1'], c['expected'].f1, 'f1'),
  },
  {
    set: 'reasonrag_terminal',
    scheme: 'reasonrag-terminal',
    options: (c) => [`beta=${c['beta']}`, 'process=true'],
    input: (c) => ({ ...c, response: c['raw_response'] }),
    check: (r, c) => same(r['total'], c['expected'].reward, 'reward from raw_response'),
  },
];

/** Scores a set's file in one `scoreTexts` call per option set; returns the mismatches and the count run. */
async function runTextSet(dir: string, s: TextSet, tmp: string): Promise<{ run: number; bad: string[] }> {
  const all = cases(dir, s.set);
  const groups = new Map<string, Case[]>();
  for (const c of all) {
    const key = JSON.stringify(s.options(c));
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const bad: string[] = [];
  let g = 0;
  for (const [key, group] of groups) {
    const file = join(tmp, `${dir}-${s.set}-${g}.jsonl`);
    const out = join(tmp, `${dir}-${s.set}-${g++}.out.jsonl`);
    writeFileSync(file, group.map((c) => JSON.stringify(s.input ? s.input(c) : c)).join('\n') + '\n');
    try {
      await scoreTexts(file, out, composeScheme(s.scheme, ['compat=authors', ...(JSON.parse(key) as string[])]));
    } catch (e) {
      bad.push(...group.map((c) => `${c['id']}: the whole file stopped: ${(e as Error).message.slice(0, 200)}`));
      continue;
    }
    const rows = lines(out);
    group.forEach((c, i) => {
      const r = rows[i];
      const why = r === undefined ? 'no output line' : r['id'] !== c['id'] ? `id ${r['id']}` : 'error' in r ? `error record: ${String(r['error']).slice(0, 120)}` : s.check(r, c);
      if (why) bad.push(`${c['id']}: ${why}`);
    });
    if (rows.length !== group.length) bad.push(`${rows.length} output lines for ${group.length} cases`);
  }
  return { run: all.length, bad };
}

for (const dir of ['parity', 'parity2']) {
  for (const s of TEXT_SETS) {
    test(`${dir}/${s.set}: ${s.scheme} compat=authors, each file scored in one call, every line as the authors' code${s.input ? ' (from raw_response)' : ''}`, async () => {
      const { dir: tmp, cleanup } = tempDir();
      try {
        const { run, bad } = await runTextSet(dir, s, tmp);
        assert.ok(run > 40, `${dir}/${s.set}: cases read`);
        assert.deepEqual(bad, [], `${dir}/${s.set}: ${run - bad.length} of ${run} match`);
      } finally {
        cleanup();
      }
    });
  }

  test(`${dir}: annotate relabel compat=authors on the tree sets, each file in one call, every tree's values and pairs`, async () => {
    const { dir: tmp, cleanup } = tempDir();
    try {
      const bad: string[] = [];
      const trees = cases(dir, 'reasonrag_tree_reward');
      const pairsSet = cases(dir, 'reasonrag_pairs');
      for (const [set, want] of [['reasonrag_tree_reward', trees], ['reasonrag_pairs', pairsSet]] as const) {
        const out = join(tmp, set);
        try {
          await relabel(data(dir, set, 'dev.jsonl'), out, { mode: 'authors', beta: 0.9, minGap: 0.01, labelThreshold: 0.5 });
        } catch (e) {
          bad.push(...want.map((c) => `${set} ${c['id']}: the whole file stopped: ${(e as Error).message.slice(0, 200)}`));
          continue;
        }
        const values = lines(join(out, 'values.jsonl'));
        const pairs = lines(join(out, 'pairs.jsonl'));
        want.forEach((c, i) => {
          const v = values[i];
          const p = pairs[i];
          const e = c['expected'];
          let why: string | undefined;
          if (v === undefined || p === undefined) why = 'no output line';
          else if (v['id'] !== c['id']) why = `id ${v['id']}`;
          else if ('error' in e) why = 'error' in v && String(v['error']).split(':')[0] === String(e.error).split(':')[0] ? undefined : `want error ${e.error}, got ${JSON.stringify(v).slice(0, 150)}`;
          else if ('error' in v) why = `error record: ${v['error']}`;
          else if (set === 'reasonrag_tree_reward') {
            const got = v['node_rewards'] as Record<string, number | null>;
            const keys = Object.keys(e.node_rewards);
            why = same(Object.keys(got).join(), keys.join(), 'keys') ?? keys.map((k) => same(got[k], e.node_rewards[k], k)).find(Boolean);
          } else {
            why = isDeepStrictEqual(p['pairs'], e.pairs) ? undefined : `pairs ${JSON.stringify(p['pairs']).slice(0, 200)}`;
          }
          if (why) bad.push(`${set} ${c['id']}: ${why.slice(0, 300)}`);
        });
      }
      const run = trees.length + pairsSet.length;
      assert.deepEqual(bad, [], `${dir} trees: ${run - bad.length} of ${run} match`);
    } finally {
      cleanup();
    }
  });
}
