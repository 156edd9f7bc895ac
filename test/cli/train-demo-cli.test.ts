/** `ragtrail demo`, `ragtrail train` and `--policy gym:FILE` as users run them. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliRunner, tempDir } from '../helpers.js';
import { startFakeOpenAI } from '../fixtures/fake-openai.js';

const tmp = tempDir();
const { run: ragtrail, runAsync: ragtrailAsync } = cliRunner(tmp.dir);
const demo = join(tmp.dir, 'demo');
let demoRun: ReturnType<typeof ragtrail>;

before(() => {
  // A small world keeps the test quick; the README's main command runs the full-size one.
  demoRun = ragtrail('demo', '--out', demo, '--entities', '1500', '--train-questions', '60', '--test-questions', '25', '--simulations', '8', '--grpo-epochs', '2', '--n', '4');
});
after(tmp.cleanup);

describe('ragtrail demo', () => {
  it('runs the whole loop and writes the report, results and a printed table', () => {
    assert.equal(demoRun.status, 0, demoRun.stderr);
    for (const f of ['report.html', 'results.json', 'results.md', 'seed-0/prm/prm.json', 'seed-0/base/policy.json', 'seed-0/step-dpo/policy.json', 'seed-0/grpo/policy.json', 'seed-0/annotate/pairs.jsonl']) assert.ok(existsSync(join(demo, f)), f);
    const results = JSON.parse(readFileSync(join(demo, 'results.json'), 'utf8'));
    const cells = results.seeds[0].cells;
    assert.deepEqual(cells.map((c: { system: string }) => c.system), ['base', 'step-DPO (process)', 'GRPO (outcome)', 'base + PRM best-of-4', 'step-DPO + PRM best-of-4', 'step-DPO (gap ≥ 0.3)', 'base + PRM (gap ≥ 0.3) best-of-4']);
    assert.ok(cells.every((c: { n: number }) => c.n === 25));
    assert.deepEqual(results.claims.map((c: { treatment: string; control: string; n: number }) => [c.treatment, c.control, c.n]), [['step-DPO (process)', 'GRPO (outcome)', 25], ['base + PRM best-of-4', 'base', 25], ['step-DPO (gap ≥ 0.3)', 'GRPO (outcome)', 25], ['base + PRM (gap ≥ 0.3) best-of-4', 'base', 25]]);
    assert.match(demoRun.stdout, /step-DPO \(process\)\s+0\.\d{4} \[/);
    assert.match(demoRun.stdout, /non-LLM model/);
    assert.match(demoRun.stdout, /(holds|does not hold): step-level process preferences beat outcome-reward RL/);
    const html = readFileSync(join(demo, 'report.html'), 'utf8');
    assert.match(html, /step-dpo: step-level DPO loss by epoch/);
    assert.match(html, /step-dpo: pair accuracy by epoch/);
    assert.match(html, /grpo: mean reward of the sampled episodes by batch/);
    assert.match(html, /<polyline/);
    // Issue 43: EM split by question type, the claims on the questions that need retrieval, and a sentence per row.
    assert.match(html, /EM by question type/);
    assert.match(html, /on the questions that need retrieval (HOLDS|does not hold)/);
    assert.match(html, /base: the warm-started gym policy/);
    assert.match(readFileSync(join(demo, 'results.md'), 'utf8'), /\| system \| .*needs retrieval \|/);
  });
});

describe('ragtrail demo --llm', () => {
  it('drives the same pipeline with an LLM (a fake server on loopback) and writes the TRL configs', async () => {
    // The fake model searches for the question once, then answers "unknown": no pair survives, so the PRM stage is skipped.
    const fake = await startFakeOpenAI((r) => {
      const msgs = (r.body['messages'] ?? []) as { content: string }[];
      const question = /Question: (.*)/.exec(msgs[msgs.length - 1]?.content ?? '')?.[1] ?? '';
      return msgs.some((m) => m.content.includes('<information>')) ? '<think>ok</think><answer> unknown </answer>' : `<think>look</think><search> ${question} </search>`;
    });
    try {
      const out = join(tmp.dir, 'demo-llm');
      const r = await ragtrailAsync('demo', '--out', out, '--entities', '600', '--train-questions', '8', '--test-questions', '6', '--simulations', '3', '--agent', 'search-r1', '--llm', `openai:${fake.url}#fake`);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /the LLM openai:\S+#fake, training through TRL/);
      assert.match(r.stderr, /-m ragtrail_trl\.train --config \S+seed-0\/grpo\/trl-config\.json/);
      assert.match(r.stderr, /step-dpo skipped: annotate mined no preference pairs/);
      assert.match(r.stderr, /prm skipped: annotate-judge mined pairs on 0 question/);
      const grpo = JSON.parse(readFileSync(join(out, 'seed-0', 'grpo', 'trl-config.json'), 'utf8'));
      assert.equal(grpo.algo, 'grpo');
      assert.equal(grpo.model, 'Qwen/Qwen2.5-7B-Instruct');
      const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
      assert.deepEqual(results.seeds[0].cells.map((c: { system: string; n: number }) => [c.system, c.n]), [['base', 6]]);
      assert.deepEqual(results.claims, []);
    } finally {
      await fake.close();
    }
  });
});

describe('ragtrail train', () => {
  it('trains the gym policy with step-DPO from an annotation folder, usable as --policy gym:FILE', () => {
    const policy = join(tmp.dir, 'dpo.json');
    const r = ragtrail('train', '--algo', 'dpo', '--data', join(demo, 'seed-0', 'annotate'), '--policy-out', policy, '--epochs', '4');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /step-level dpo on \d+ pairs/);
    assert.match(r.stdout, /loss 0\.6931 → 0\.\d{4}/);
    const run = ragtrail('run', '--policy', `gym:${policy}`, '--agent', 'reasonrag', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--split', 'test', '--limit', '10', '--out', join(tmp.dir, 'run'));
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /10 questions run/);
    assert.match(run.stderr, /\[non-LLM\]/);
  });

  it('trains GRPO online and reports the sampled reward', () => {
    const r = ragtrail('train', '--algo', 'grpo', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--limit', '20', '--epochs', '1', '--group-size', '4', '--policy-out', join(tmp.dir, 'grpo.json'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /grpo on 20 questions/);
    assert.match(r.stdout, /mean sampled reward 0\.\d{4} → 0\.\d{4}/);
  });

  it('--engine trl writes the TRL config and prints the exact command', () => {
    const out = join(tmp.dir, 'trl-dpo');
    const r = ragtrail('train', '--engine', 'trl', '--algo', 'dpo', '--data', join(demo, 'seed-0', 'annotate'), '--out', out, '--lora', '--max-steps', '5', '--trainer', 'beta=0.3', '--print-only');
    assert.equal(r.status, 0, r.stderr);
    const config = JSON.parse(readFileSync(join(out, 'trl-config.json'), 'utf8'));
    assert.equal(config.algo, 'dpo');
    assert.equal(config.data, join(demo, 'seed-0', 'annotate', 'trl_preference.jsonl'));
    assert.deepEqual(config.trainer, { beta: 0.3, max_steps: 5, seed: 0 });
    assert.equal(config.lora.r, 16);
    assert.match(r.stdout, /command: PYTHONPATH=\S+python \S+ -m ragtrail_trl\.train --config \S+config\.json/);
  });

  it('--engine trl --algo prorag writes ProRAG\'s fields; --control-weight goes to sft', () => {
    const out = join(tmp.dir, 'trl-prorag');
    const r = ragtrail('train', '--engine', 'trl', '--algo', 'prorag', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--prm', join(demo, 'seed-0', 'prm', 'prm.json'), '--out', out, '--dual-weight', '0.5', '--group-size', '8', '--print-only');
    assert.equal(r.status, 0, r.stderr);
    const config = JSON.parse(readFileSync(join(out, 'trl-config.json'), 'utf8'));
    assert.equal(config.algo, 'prorag');
    assert.equal(config.dual_weight, 0.5);
    assert.equal(config.step_form, 'code');
    assert.equal(config.trainer.num_generations, 8);
    assert.match(config.env.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const sft = ragtrail('train', '--engine', 'trl', '--algo', 'sft', '--data', join(demo, 'seed-0', 'annotate'), '--out', join(tmp.dir, 'trl-sft'), '--control-weight', '2', '--print-only');
    assert.equal(sft.status, 0, sft.stderr);
    assert.equal(JSON.parse(readFileSync(join(tmp.dir, 'trl-sft', 'trl-config.json'), 'utf8')).control_token_weight, 2);
    const noPrm = ragtrail('train', '--engine', 'trl', '--algo', 'prorag', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--out', join(tmp.dir, 'x'));
    assert.equal(noPrm.status, 2);
    assert.match(noPrm.stderr, /--algo prorag needs --prm/);
    const misplaced = ragtrail('train', '--engine', 'trl', '--algo', 'dpo', '--data', join(demo, 'seed-0', 'annotate'), '--out', join(tmp.dir, 'x'), '--control-weight', '2');
    assert.equal(misplaced.status, 2);
    assert.match(misplaced.stderr, /--control-weight is ProRAG's warm-up SFT setting/);
  });

  it('--engine trl --algo dapo|lws write DAPO\'s and LWS\'s fields; --kl k2 reaches grpo', () => {
    const world = ['--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl')];
    const dapo = ragtrail('train', '--engine', 'trl', '--algo', 'dapo', ...world, '--out', join(tmp.dir, 'trl-dapo'), '--eps-high', '0.3', '--max-rounds', '4', '--soft-overlong', '32', '--print-only');
    assert.equal(dapo.status, 0, dapo.stderr);
    const d = JSON.parse(readFileSync(join(tmp.dir, 'trl-dapo', 'trl-config.json'), 'utf8'));
    assert.equal(d.algo, 'dapo');
    assert.deepEqual(d.dynamic_sampling, { max_rounds: 4 });
    assert.equal(d.soft_overlong_cache, 32);
    assert.equal(d.trainer.epsilon_high, 0.3);
    const lws = ragtrail('train', '--engine', 'trl', '--algo', 'lws', ...world, '--out', join(tmp.dir, 'trl-lws'), '--switch-plateau', '5', '--plateau-tolerance', '0.01', '--print-only');
    assert.equal(lws.status, 0, lws.stderr);
    const l = JSON.parse(readFileSync(join(tmp.dir, 'trl-lws', 'trl-config.json'), 'utf8'));
    assert.deepEqual(l.stage_switch, { plateau_window: 5, plateau_tolerance: 0.01 });
    assert.match(l.env_stage2.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(l.env_stage2.url, l.env.url);
    assert.match(lws.stderr, /outcome lws-stage1/);
    assert.match(lws.stderr, /outcome lws-stage2/);
    const grpo = ragtrail('train', '--engine', 'trl', '--algo', 'grpo', ...world, '--out', join(tmp.dir, 'trl-k2'), '--kl', 'k2', '--kl-beta', '0.04', '--print-only');
    assert.equal(grpo.status, 0, grpo.stderr);
    const g = JSON.parse(readFileSync(join(tmp.dir, 'trl-k2', 'trl-config.json'), 'utf8'));
    assert.equal(g.kl_estimator, 'k2');
    assert.equal(g.trainer.beta, 0.04);
  });

  it('names the problem and the fix for bad flags', () => {
    const rft = ragtrail('train', '--engine', 'trl', '--algo', 'rft', '--out', join(tmp.dir, 'x'));
    assert.equal(rft.status, 2);
    assert.match(rft.stderr, /--engine trl trains sft, dpo, prm, grpo, prorag, dapo, lws; "rft" is a gym algorithm/);
    const gymFlag = ragtrail('train', '--engine', 'trl', '--algo', 'dapo', '--questions-per-batch', '4', '--out', join(tmp.dir, 'x'));
    assert.equal(gymFlag.status, 2);
    assert.match(gymFlag.stderr, /--questions-per-batch is a gym setting; --engine trl does not use it/);
    const klOnSft = ragtrail('train', '--engine', 'trl', '--algo', 'sft', '--kl', 'k2', '--data', join(demo, 'seed-0', 'annotate'), '--out', join(tmp.dir, 'x'));
    assert.equal(klOnSft.status, 2);
    assert.match(klOnSft.stderr, /--kl is a setting of grpo, prorag, dapo, lws, not sft/);
    const noData = ragtrail('train', '--algo', 'dpo', '--policy-out', join(tmp.dir, 'p.json'));
    assert.equal(noData.status, 2);
    assert.match(noData.stderr, /--algo dpo needs --data DIR/);
    const noPrm = ragtrail('train', '--algo', 'prorag', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--policy-out', join(tmp.dir, 'p.json'));
    assert.equal(noPrm.status, 2);
    assert.match(noPrm.stderr, /prorag needs --prm/);
    const badPolicy = ragtrail('run', '--policy', 'gym', '--agent', 'reasonrag', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--limit', '1', '--out', join(tmp.dir, 'r2'));
    assert.equal(badPolicy.status, 0, badPolicy.stderr);
    const typo = ragtrail('run', '--policy', 'gim:x.json', '--index', join(demo, 'seed-0', 'index'), '--dataset', join(demo, 'seed-0', 'world', 'questions.jsonl'), '--out', join(tmp.dir, 'r3'));
    assert.equal(typo.status, 2);
    assert.match(typo.stderr, /gym:FILE/);
    const types = ragtrail('llm-loop', '--question-types', 'single-hop,bridge', '--out', join(tmp.dir, 'loop'));
    assert.equal(types.status, 2);
    assert.match(types.stderr, /--question-types.*expected a comma-separated list of single-hop, compositional, comparison, bridge-comparison; got "single-hop,bridge"/);
    const input = ragtrail('llm-loop', '--prm-input', 'docs', '--out', join(tmp.dir, 'loop'));
    assert.equal(input.status, 2);
    assert.match(input.stderr, /--prm-input.*steps, evidence/);
    const split = ragtrail('llm-loop', '--eval-split', 'train', '--out', join(tmp.dir, 'loop'));
    assert.equal(split.status, 2);
    assert.match(split.stderr, /--eval-split.*test, dev/);
  });
});
