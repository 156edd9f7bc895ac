/**
 * A full disk and two writers, through the CLI (issue 49). On a real, small tmpfs (skipped where this
 * user may not mount one; test/core/disk-full.test.ts covers the same through the write seam): `run`
 * stops with one line naming the folder and the space needed, its trajectories.jsonl ends on a whole
 * line, and once space is freed the same command resumes to the records of an uninterrupted run;
 * `index build` leaves no index and its re-run builds the same files. And two `run`s started at once
 * into one --out: one runs, the other is refused naming it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliRunner, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
const { run: ragtrail } = cliRunner(tmp.dir);
const world = join(tmp.dir, 'world');
const index = join(tmp.dir, 'index');
const disk = join(tmp.dir, 'disk');
mkdirSync(disk);
// 400 KB of tmpfs: a run of this world writes ~350 KB of trajectories, the index ~200 KB.
const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=400k', 'tmpfs', disk], { encoding: 'utf8' });
const mounted = mount.status === 0;
after(() => {
  if (mounted) spawnSync('umount', [disk]);
  tmp.cleanup();
});

before(() => {
  assert.equal(ragtrail('world', '--seed', '3', '--entities', '400', '--out', world).status, 0);
  assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).status, 0);
});

/** The records of a run, by id, without their timings. */
function records(dir: string): Map<string, unknown> {
  const strip = (k: string, v: unknown) => (k.endsWith('Ms') ? undefined : v);
  const rows = readFileSync(join(dir, 'trajectories.jsonl'), 'utf8').split('\n').filter(Boolean);
  return new Map(rows.map((l) => JSON.parse(l, strip) as { id: string }).map((t) => [t.id, t]));
}

/** Fills the tmpfs to leave about `free` bytes. */
function fillLeaving(free: number): void {
  const { bavail, bsize } = statfsSync(disk);
  writeFileSync(join(disk, 'filler'), Buffer.alloc(Math.max(0, bavail * bsize - free)));
}

describe('a full disk, on a small tmpfs', { skip: !mounted && `cannot mount a tmpfs here (${mount.stderr.trim() || `exit ${mount.status}`}): covered by test/core/disk-full.test.ts` }, () => {
  const common = ['--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', '', '--concurrency', '2', '--quiet'];

  it('run: one line naming the folder and the space needed, a whole last line, and the re-run after freeing space equals an uninterrupted run', () => {
    const reference = join(tmp.dir, 'run-ref');
    assert.equal(ragtrail('run', ...common, '--out', reference).status, 0);
    const total = readFileSync(join(reference, 'trajectories.jsonl')).length;

    fillLeaving(150_000);
    const out = join(disk, 'x');
    const full = ragtrail('run', ...common, '--out', out);
    assert.equal(full.status, 1, full.stderr);
    const m = /^ragtrail: no space left on device writing (.*): needs about (\d+ KB) more, (\d+ (?:KB|bytes)) free in (.*) \(free space there and re-run the same command to resume\)\n$/.exec(full.stderr);
    assert.ok(m, full.stderr);
    assert.equal(m[1], join(out, 'trajectories.jsonl'));
    assert.equal(m[4], out);
    const text = readFileSync(join(out, 'trajectories.jsonl'), 'utf8');
    assert.ok(text.endsWith('\n'), 'no torn last line');
    const kept = records(out).size; // every line parses
    assert.ok(kept > 0 && kept < 80, `${kept} records kept`);
    // The estimate: the records still to come at the average size so far, against what they took in the reference run.
    const needed = total - text.length;
    const bytes = (s: string) => Number(s.split(' ')[0]) * (s.endsWith('KB') ? 1024 : 1);
    const said = bytes(m[2]!) + bytes(m[3]!);
    assert.ok(Math.abs(said - needed) / needed < 0.25, `said ${said} bytes for ${needed}`);
    assert.deepEqual(readdirSync(out).sort(), ['run.json', 'trajectories.jsonl'], 'no lock, no temporary file');

    rmSync(join(disk, 'filler'));
    const resumed = ragtrail('run', ...common, '--out', out);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`: ${80 - kept} questions run, ${kept} already done`));
    assert.deepEqual(records(out), records(reference));
    rmSync(out, { recursive: true });
  });

  it('index build: leaves no index and no partial folder, and the re-run after freeing space builds the same files', () => {
    fillLeaving(100_000);
    const out = join(disk, 'idx');
    const full = ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', out);
    assert.equal(full.status, 1, full.stderr);
    assert.match(full.stderr, new RegExp(`^ragtrail: no space left on device building the index ${out}: needs about \\d+ KB more, \\d+ (KB|bytes) free in ${disk} \\(free space there and re-run the same command to resume\\)\\n$`));
    assert.deepEqual(readdirSync(disk), ['filler']);

    rmSync(join(disk, 'filler'));
    const again = ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', out);
    assert.equal(again.status, 0, again.stderr);
    for (const f of ['docs.jsonl', 'docs.off', ...readdirSync(join(index, 'bm25')).map((n) => join('bm25', n))]) {
      assert.ok(readFileSync(join(out, f)).equals(readFileSync(join(index, f))), f);
    }
  });
});

describe('two writers', () => {
  it('two runs started at once into one --out: one runs to the end, the other is refused naming it', async () => {
    // slow:MS: the sim policy waiting before each step, so that the winner still holds the folder when the other starts.
    const plugin = join(tmp.dir, 'slow.mjs');
    writeFileSync(
      plugin,
      `export default function (api) {
  api.registerPolicy('slow', (arg, protocol, o) => {
    const sim = api.registries.policies.get('sim')('', protocol, o);
    return Object.assign(Object.create(sim), { propose: async (...a) => { await new Promise((r) => setTimeout(r, Number(arg))); return sim.propose(...a); } });
  });
}
`,
    );
    const out = join(tmp.dir, 'shared');
    const args = ['run', '--plugin', plugin, '--policy', 'slow:40', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', '', '--limit', '40', '--concurrency', '2', '--quiet', '--out', out];
    const start = () =>
      new Promise<{ code: number | null; stderr: string; pid: number }>((resolve) => {
        const c = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: tmp.dir, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        c.stderr!.on('data', (d) => (stderr += d));
        c.on('close', (code) => resolve({ code, stderr, pid: c.pid! }));
      });
    const results = await Promise.all([start(), start()]);
    const won = results.filter((r) => r.code === 0);
    const lost = results.filter((r) => r.code !== 0);
    assert.equal(won.length, 1, JSON.stringify(results));
    assert.equal(lost[0]!.code, 2);
    assert.equal(lost[0]!.stderr, `ragtrail: run folder ${out} is in use by process ${won[0]!.pid} on this host (\`ragtrail ${args.join(' ')}\`, since ${/since ([^)]+)\)/.exec(lost[0]!.stderr)?.[1]}) (wait for it to finish, or stop it (kill ${won[0]!.pid}) and re-run)\n`);
    assert.equal(records(out).size, 40);
    assert.equal(existsSync(join(out, '.lock')), false);
  });
});
