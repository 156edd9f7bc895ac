/**
 * The bridge to TRL: a Python virtual environment with the pinned requirements of python/, a JSON
 * config, and `python -m ragtrail_trl.train --config FILE`, whose exact command line is printed.
 * Gradient training of LLM weights happens there, in TRL's own trainers; nothing is re-implemented.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../core/errors.js';

/** python/ of the installed package (src/learn → ../../python, and the same from dist/learn). */
export const PYTHON_DIR = resolve(fileURLToPath(new URL('../../python', import.meta.url)));
export const REQUIREMENTS = join(PYTHON_DIR, 'requirements.txt');

/**
 * `prorag` is GRPO with ProRAG's per-token dual-granularity advantage (python/ragtrail_trl/prorag.py);
 * `dapo` is DAPO (clip-higher, token-level loss, overlong filtering, dynamic sampling) and `lws` DAPO
 * whose reward moves from LWS's stage 1 to stage 2 (python/ragtrail_trl/dapo.py).
 */
export type TrlAlgo = 'sft' | 'dpo' | 'prm' | 'grpo' | 'prorag' | 'dapo' | 'lws';

/**
 * The JSON config `python -m ragtrail_trl.train` reads (snake_case, as the Python side names it): the
 * algorithm, the base model (or a `tiny` random one), the data file, LoRA and trainer settings, and
 * for
 * GRPO-style runs the environment server to roll out against.
 */
export interface TrlConfig {
  algo: TrlAlgo;
  model: string;
  tiny?: Record<string, unknown>;
  data: string;
  output_dir: string;
  lora: { r: number; alpha: number; dropout: number; target_modules: string | string[] } | null;
  trainer: Record<string, unknown>;
  /** protocol: "tools" (search/answer tool calls through TRL's tool loop) or the --agent the server runs, whose text the model writes. */
  env?: { url: string; token: string | null; protocol?: string };
  max_examples?: number;
  /** grpo/prorag: the questions' split, as `--split` gave it ("" all); absent: train when the rows carry splits, else all. */
  split?: string;
  /** sft: ProRAG's weight λ of the control-tag tokens in the loss (1 = plain SFT). */
  control_token_weight?: number;
  /** prorag: w in A_out + w·A_step (default 0.3, ProRAG's run script; its code's default is 0.5). */
  dual_weight?: number;
  /** prorag: step reward sigmoid(PRM) + (+1 / −2) ("code", default) or PRM + λ_f·1[valid] ("spec"). */
  step_form?: 'code' | 'spec';
  /** prorag, spec form: λ_f. */
  lambda_f?: number;
  /** grpo/prorag/dapo/lws: the KL estimator (k3 default, TRL's; k2 ARENA's; k1). */
  kl_estimator?: 'k1' | 'k2' | 'k3';
  /** dapo/lws: DAPO's dynamic sampling (default true, at most 10 generation rounds per batch; 0 = no limit). */
  dynamic_sampling?: boolean | { enabled?: boolean; max_rounds?: number };
  /** dapo/lws: L_cache of DAPO's soft overlong punishment (Eq. 13); 0 = off. */
  soft_overlong_cache?: number;
  /** lws: the environment server that scores with the stage-2 reward. */
  env_stage2?: { url: string; token: string | null };
  /** lws: when stage 2 starts: a step, a share of max_steps, and/or a plateau of the logged mean reward (the first to fire). */
  stage_switch?: { at_step?: number; share?: number; plateau_window?: number; plateau_tolerance?: number };
}

/** Where and with what {@link ensureVenv} creates the Python environment for TRL. */
export interface VenvOptions {
  /** Folder of the virtual environment (default $RAGTRAIL_VENV or ~/.cache/ragtrail/trl-venv). */
  venv?: string;
  /** Interpreter that creates it (default $RAGTRAIL_PYTHON, python3, python). */
  python?: string;
  /** Extra pip arguments, e.g. a local index (default $RAGTRAIL_PIP_ARGS, split on spaces). */
  pipArgs?: string[];
  /** Receives each command run and each progress line (default: stderr). */
  log?: (line: string) => void;
}

/** Where the TRL virtual environment lives: `$RAGTRAIL_VENV`, else `~/.cache/ragtrail/trl-venv`. */
export function defaultVenv(): string {
  return process.env['RAGTRAIL_VENV'] ?? join(homedir(), '.cache', 'ragtrail', 'trl-venv');
}

function findPython(explicit?: string): string {
  const candidates = explicit ? [explicit] : [process.env['RAGTRAIL_PYTHON'], 'python3', 'python'].filter((x): x is string => !!x);
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
    if (r.status !== 0) continue;
    const [major, minor] = r.stdout.trim().split('.').map(Number);
    if (major === 3 && minor! >= 10) return py;
    throw new InputError(`${py} is Python ${r.stdout.trim()}; TRL training needs Python 3.10 or newer`, 'install a newer Python or point RAGTRAIL_PYTHON at one');
  }
  throw new InputError('Python was not found (tried ' + candidates.join(', ') + ')', 'install Python 3.10+ with venv (e.g. apt-get install python3 python3-venv) or set RAGTRAIL_PYTHON');
}

const requirementsHash = () => createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex').slice(0, 16);

function run(cmd: string, args: string[], log: (line: string) => void, env?: NodeJS.ProcessEnv): void {
  log(`$ ${[cmd, ...args].map(shellQuote).join(' ')}`);
  // The tools' output goes to stderr, so that stdout stays for results (scripts read the python path from it).
  const r = spawnSync(cmd, args, { stdio: [0, 2, 2], env: env ?? process.env });
  if (r.status !== 0) throw new InputError(`\`${cmd} ${args.slice(0, 3).join(' ')} …\` failed (exit ${r.status ?? r.signal})`, 'read the output above; offline, give pip a local index with RAGTRAIL_PIP_ARGS="--index-url file:///…"');
}

export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The venv's python, created and filled on first use; re-installed when requirements.txt changes
 * (a marker file records the hash of the requirements it was built from).
 */
export function ensureVenv(opts: VenvOptions = {}): string {
  const log = opts.log ?? ((l: string) => console.error(l));
  const venv = resolve(opts.venv ?? defaultVenv());
  const py = join(venv, 'bin', 'python');
  const marker = join(venv, '.ragtrail-requirements');
  const want = requirementsHash();
  if (existsSync(py) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === want) return py;
  const base = findPython(opts.python);
  if (!existsSync(py)) {
    log(`creating the Python environment for TRL in ${venv} (once)`);
    mkdirSync(venv, { recursive: true });
    run(base, ['-m', 'venv', venv], log);
  }
  const pipArgs = opts.pipArgs ?? (process.env['RAGTRAIL_PIP_ARGS'] ?? '').split(/\s+/).filter(Boolean);
  run(py, ['-m', 'pip', 'install', '--disable-pip-version-check', '-r', REQUIREMENTS, ...pipArgs], log);
  writeFileSync(marker, want + '\n');
  return py;
}

/** Writes `config` to `path` as indented JSON, replacing the file. */
export function writeTrlConfig(config: TrlConfig, path: string): void {
  writeFileSync(path, JSON.stringify(config, null, 2) + '\n');
}

/** The command `ragtrail train --engine trl` runs, for printing and for running. */
export function trlCommand(python: string, configPath: string): { cmd: string; args: string[]; env: NodeJS.ProcessEnv; line: string } {
  const args = ['-m', 'ragtrail_trl.train', '--config', configPath];
  const env = { ...process.env, PYTHONPATH: [PYTHON_DIR, process.env['PYTHONPATH']].filter(Boolean).join(':'), TRL_EXPERIMENTAL_SILENCE: '1', TOKENIZERS_PARALLELISM: 'false', HF_DATASETS_DISABLE_PROGRESS_BARS: '1' };
  return { cmd: python, args, env, line: `PYTHONPATH=${shellQuote(PYTHON_DIR)} ${[python, ...args].map(shellQuote).join(' ')}` };
}

/** Runs TRL training; resolves with the exit code (the Python side prints its own summary). */
export function runTrl(python: string, configPath: string): Promise<number> {
  const { cmd, args, env } = trlCommand(python, configPath);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolvePromise(code ?? (signal ? 128 : 1)));
  });
}
