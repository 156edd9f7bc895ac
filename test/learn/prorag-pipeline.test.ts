/**
 * ProRAG's four stages end to end on a small synthetic world with the gym policy and the ProRAG step tags:
 * control-weighted warm-up SFT on teacher (oracle) steps → MCTS-PUCT annotation with the warmed-up policy,
 * pairs from the sibling judge (the offline rule) → the PRM → PRM-filtered RFT → ProRAG RL. Each stage
 * must run and move the policy; the same folders then go through the CLI (`train --algo rft`, `--control-weight`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import { OraclePolicy } from '../../src/agents/oracle.js';
import { getProtocol } from '../../src/agents/registry.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { RagEnv } from '../../src/env/env.js';
import type { StateAction } from '../../src/learn/gym/data.js';
import { choicesFor, GymPolicy, indexOf } from '../../src/learn/gym/policy.js';
import { trainRft } from '../../src/learn/gym/rft.js';
import { trainRl, trainSft } from '../../src/learn/gym/train.js';
import { readPrmPairs, trainPrm } from '../../src/prm/trained.js';
import { annotate } from '../../src/process/annotate.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
const protocol = getProtocol('prorag');
let env: RagEnv;
let questions: Question[];

before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 3, entities: 600, questions: 60 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
  env = new RagEnv({ retriever: await openRetriever(join(tmp.dir, 'index')), topK: 3, maxTurns: 6, maxSearches: 4 });
  questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions.slice(0, 32);
});
after(tmp.cleanup);

/** The teacher's steps that the gym can express: the oracle's actions found among the generated candidates. */
async function teacherSteps(qs: readonly Question[]): Promise<StateAction[]> {
  const oracle = new OraclePolicy(protocol);
  const out: StateAction[] = [];
  for (const q of qs) {
    let s = env.reset(q);
    while (!s.done) {
      const action = oracle.act(s);
      if (indexOf(choicesFor(s, protocol), action) >= 0) out.push({ state: s, action, questionId: q.id });
      s = (await env.step(s, { action, raw: protocol.format(action, s) })).state;
    }
  }
  return out;
}

const params = (p: GymPolicy) => [...p.model.params];

describe('ProRAG in the gym: SFT (λ) → MCTS + judge pairs → PRM → RFT → ProRAG RL', () => {
  it('runs every stage, and each one changes the policy', async () => {
    // 1. Warm-up SFT with the action-type decision weighted twice.
    const demos = await teacherSteps(questions);
    assert.ok(demos.length > 20, `${demos.length} teacher steps`);
    const policy = GymPolicy.fresh(protocol);
    const fresh = params(policy);
    const sftLog = trainSft(policy, demos, { epochs: 10, controlWeight: 2 });
    assert.ok(sftLog.at(-1)!.loss < sftLog[0]!.loss);
    const afterSft = params(policy);
    assert.notDeepEqual(afterSft, fresh);

    // 2. ProRAG's MCTS with the warmed-up policy as its prior; pairs from the sibling judge (the default for mcts-puct).
    const ann = join(tmp.dir, 'ann');
    const r = await annotate({ method: 'mcts-puct', outDir: ann, env, policy, questions, mcts: { simulations: 32, maxChildren: 3 }, config: { method: 'mcts-puct', seed: 0 }, quiet: true });
    assert.equal(r.stats.pairSource, 'judge');
    assert.ok(r.stats.judge!.nodes > r.stats.pairs && r.stats.pairs >= 5, JSON.stringify(r.stats.judge));
    assert.equal(readFileSync(join(ann, 'judge_log.jsonl'), 'utf8').trim().split('\n').length, r.stats.judge!.nodes);
    assert.deepEqual(params(policy), afterSft, 'annotation does not train');

    // 3. The PRM on the judged pairs.
    const { prm } = await trainPrm(await readPrmPairs(join(ann, 'prm_pairs.jsonl')), { holdout: 0 });
    assert.ok(prm.saved.training.trainAccuracy > 0.5, `PRM train accuracy ${prm.saved.training.trainAccuracy}`);
    prm.save(join(tmp.dir, 'prm.json'));

    // 4. RFT: correct episodes whose every step the PRM passes.
    const rft = await trainRft(policy, { env, questions, prm }, { samples: 4, epochs: 10 });
    assert.ok(rft.counts.kept > 0 && rft.counts.kept < rft.counts.correct, JSON.stringify(rft.counts));
    const afterRft = params(policy);
    assert.notDeepEqual(afterRft, afterSft);
    policy.save(join(tmp.dir, 'rft.json'));

    // 5. ProRAG RL: GRPO with the dual-granularity advantage, step rewards from the same PRM.
    const rl = await trainRl(policy, { env, questions, prm }, { algo: 'prorag', epochs: 1, questionsPerBatch: 16, groupSize: 4 });
    assert.equal(rl.length, 2);
    assert.ok(rl.every((e) => Number.isFinite(e.loss) && Number.isFinite(e['reward']!)));
    assert.notDeepEqual(params(policy), afterRft);
  });

  it('the CLI: train --algo rft with --prm, and sft with --control-weight on the annotation folder', () => {
    const { run } = cliRunner(tmp.dir);
    const out = join(tmp.dir, 'rft-cli.json');
    const r = run('train', '--algo', 'rft', '--agent', 'prorag', '--init', `gym:${join(tmp.dir, 'rft.json')}`, '--index', join(tmp.dir, 'index'), '--dataset', join(tmp.dir, 'world', 'questions.jsonl'), '--split', '', '--limit', '32', '--prm', join(tmp.dir, 'prm.json'), '--rft-samples', '3', '--rft-threshold', '0.4', '--epochs', '3', '--policy-out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /rft on 32 questions: 3 episodes each at T 0\.8, kept when EM and sigmoid\(PRM\) ≥ 0\.4 at each step \(kept one by one\)/);
    assert.match(r.stdout, /rft 0: loss \d\.\d{4}, questions 32, sampled 96, correct \d+, kept \d+, keptSteps \d+/);
    assert.match(r.stdout, /rft: 96 episodes sampled, \d+ correct, \d+ kept \(\d+ steps from \d+ of 32 questions\)/);
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).training[0].algo, 'rft');
    const sft = run('train', '--algo', 'sft', '--data', join(tmp.dir, 'ann'), '--control-weight', '2', '--epochs', '2', '--policy-out', join(tmp.dir, 'sft-cli.json'));
    assert.equal(sft.status, 0, sft.stderr);
    assert.match(sft.stdout, /sft on \d+ demonstrated steps from 32 trees \(action-type decision weighted 2\)/);
  });
});
