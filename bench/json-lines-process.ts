/**
 * An anchor engine in a child process that stays up and speaks one JSON object per line on stdout
 * (bench/faiss_anchor.py hnsw-serve, bench/bm25_anchor.py … serve): the benches ask it for one more
 * timing right before or after they time ragtrail, so that each pair of figures is taken at the same
 * moment. Its stderr goes to the bench's.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export class JsonLinesProcess {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: AsyncIterator<string>;

  constructor(
    command: string,
    args: string[],
    /** Named in the error when the process ends before answering. */
    private readonly name: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  /** The next object the process prints. */
  async next(): Promise<Record<string, unknown>> {
    const r = await this.lines.next();
    if (r.done) throw new Error(`${this.name} ended early (its error is above)`);
    return JSON.parse(r.value) as Record<string, unknown>;
  }

  /** Sends one command line and waits for the object that answers it. */
  async ask(line: string): Promise<Record<string, unknown>> {
    this.child.stdin.write(`${line}\n`);
    return this.next();
  }

  /** Closes its stdin: the process's serve loop ends and it exits. */
  close(): void {
    this.child.stdin.end();
  }
}
