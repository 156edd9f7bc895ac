/**
 * Python servers the LLM loop starts and stops: `transformers serve` (an OpenAI-compatible server
 * shipped with transformers) for a trained checkpoint, and `ragtrail_trl.serve_prm` for a trained
 * PRM. Each runs as a child process on 127.0.0.1, its output in a log file; `start` resolves once
 * its health endpoint answers and fails with the log's tail if the process dies first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { RagtrailError } from '../core/errors.js';
import { PYTHON_DIR } from './trl.js';

export interface PythonService {
  /** Base URL, e.g. http://127.0.0.1:PORT. */
  url: string;
  port: number;
  log: string;
  stop(): Promise<void>;
}

/** A free TCP port on loopback (the OS picks it; it is released before the server binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return r.ok;
  } catch {
    return false;
  }
}

export interface StartOptions {
  cmd: string;
  args: string[];
  port: number;
  /** Path polled with GET until it answers 2xx. */
  healthPath: string;
  log: string;
  /** Seconds to wait for health (default 180: loading torch and a model on a busy CPU is slow). */
  timeoutS?: number;
  what: string;
}

export async function startService(o: StartOptions): Promise<PythonService> {
  const fd = openSync(o.log, 'a');
  const env = { ...process.env, PYTHONPATH: [PYTHON_DIR, process.env['PYTHONPATH']].filter(Boolean).join(':'), TOKENIZERS_PARALLELISM: 'false', HF_HUB_OFFLINE: '1',
    // One thread: generation of a small model on a shared CPU is several times faster than with torch's default pool.
    OMP_NUM_THREADS: process.env['OMP_NUM_THREADS'] ?? '1' };
  const child: ChildProcess = spawn(o.cmd, o.args, { stdio: ['ignore', fd, fd], env });
  closeSync(fd);
  let exited: number | null = null;
  child.once('exit', (code, signal) => (exited = code ?? (signal ? 128 : 1)));
  const url = `http://127.0.0.1:${o.port}`;
  const stop = () =>
    new Promise<void>((resolveStop) => {
      if (exited !== null) return resolveStop();
      child.once('exit', () => resolveStop());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  const deadline = Date.now() + (o.timeoutS ?? 180) * 1000;
  while (Date.now() < deadline) {
    if (exited !== null) throw new RagtrailError(`${o.what} exited (code ${exited}) before it was ready; the end of ${o.log}:\n${tail(o.log)}`);
    if (await healthy(url + o.healthPath)) return { url, port: o.port, log: o.log, stop };
    await new Promise((r) => setTimeout(r, 500));
  }
  await stop();
  throw new RagtrailError(`${o.what} did not answer ${url}${o.healthPath} within ${o.timeoutS ?? 180} s; the end of ${o.log}:\n${tail(o.log)}`);
}

/**
 * Continuous batching for `transformers serve` on CPU: concurrent requests share forward passes. Its
 * paged KV cache must be sized by hand there (left alone it reserves most of the machine's memory):
 * 128 blocks of 32 tokens hold four of the loop's transcripts at once. It fixes the sampling settings
 * of the first request for the server's life (a later request's temperature is ignored), so the loop
 * gives each temperature servers of its own: a variant's evaluation samples at one (greedy, or
 * best-of-N's), and the annotation's candidates and rollouts go to two groups (llm/middleware.ts,
 * TemperatureRoutedLLM).
 */
const CONTINUOUS_BATCHING = ['--continuous-batching', '--cb-num-blocks', '128', '--cb-block-size', '32', '--cb-max-batch-tokens', '1024'];

/** `transformers serve CHECKPOINT` from the venv, on a free loopback port. */
export async function serveModel(python: string, checkpoint: string, log: string, opts: { batching?: boolean } = {}): Promise<PythonService & { spec: string }> {
  const port = await freePort();
  const cli = join(dirname(python), 'transformers');
  const args = ['serve', checkpoint, '--host', '127.0.0.1', '--port', String(port), '--device', 'cpu', ...(opts.batching ? CONTINUOUS_BATCHING : [])];
  const svc = await startService({ cmd: cli, args, port, healthPath: '/health', log, what: `transformers serve ${checkpoint}` });
  return { ...svc, spec: `openai:${svc.url}/v1#${checkpoint}` };
}

/** A trained PRM behind the vLLM pooling request shape (`remote:vllm-pooling:URL/pooling`). */
export async function servePrm(python: string, checkpoint: string, log: string): Promise<PythonService & { spec: string }> {
  const port = await freePort();
  const svc = await startService({ cmd: python, args: ['-m', 'ragtrail_trl.serve_prm', '--model', checkpoint, '--port', String(port)], port, healthPath: '/health', log, what: `the PRM server for ${checkpoint}` });
  return { ...svc, spec: `remote:vllm-pooling:${svc.url}/pooling` };
}
