#!/usr/bin/env node
/**
 * The `ragtrail` command. Each subcommand lives in its own file and only parses flags, calls one
 * library function and prints. Bad input exits with status 2 and one line saying what to fix.
 */
import cluster from 'node:cluster';
import { type Command, CommanderError } from 'commander';
import { InputError, RagtrailError } from '../core/errors.js';
import { removeCreatedEmptyDirs } from '../core/io.js';
import { diskFullError, isDiskFull } from '../core/disk.js';
import { handleInterrupts, InterruptedError, interruptMessage } from '../core/interrupt.js';
import { buildProgram } from './program.js';
import { loadPlugin, pluginArgs } from '../plugin.js';

export { buildProgram };

/** Commands that re-running resumes: Ctrl-C in them ends with a line saying how (core/interrupt.ts). */
const RESUMABLE = new Set(['run', 'annotate', 'eval', 'pipeline', 'demo', 'llm-loop', 'import', 'index build']);

function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x?.parent; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}

export async function main(argv: string[]): Promise<number> {
  try {
    for (const file of pluginArgs(argv.slice(2))) await loadPlugin(file);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    process.stderr.write(`ragtrail: ${e.message}\n`);
    return 2;
  }
  const program = buildProgram();
  program.hook('preAction', (_program, action) => {
    if (RESUMABLE.has(commandPath(action))) handleInterrupts(argv.slice(2));
  });
  if (argv.length <= 2) {
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof InterruptedError) {
      process.stderr.write(`${interruptMessage()}\n`);
      return 130;
    }
    if (e instanceof InputError) {
      process.stderr.write(`ragtrail: ${e.message}\n`);
      return 2;
    }
    if (e instanceof RagtrailError) {
      // A failure ragtrail recognised (a child process, a server): its message says what to look at.
      process.stderr.write(`ragtrail: ${e.message}\n`);
      return 1;
    }
    if (isDiskFull(e)) {
      // A write without its own handling ran out of space: still one line, with the file when known.
      process.stderr.write(`ragtrail: ${diskFullError((e as NodeJS.ErrnoException).path ?? '').message}\n`);
      return 1;
    }
    const err = e as Error;
    process.stderr.write(`ragtrail: unexpected error: ${err?.message ?? String(e)}\n`);
    if (process.env['RAGTRAIL_DEBUG']) process.stderr.write(`${err?.stack}\n`);
    else process.stderr.write('ragtrail: set RAGTRAIL_DEBUG=1 for the stack trace\n');
    return 1;
  }
}

// `ragtrail … | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

const code = await main(process.argv);
// A failed command takes back the folders it created and left empty: no bare --out folder behind.
if (code !== 0) removeCreatedEmptyDirs();
process.exitCode = code;
// A server copy of a supervisor (core/cluster.ts) that failed would stay alive on its IPC channel, and
// disconnecting makes node's cluster exit it with 0: exit now with this status, so the supervisor exits
// with it too (a port in use is then one line, exit 2). stderr is written synchronously to pipes and files.
if (code !== 0 && cluster.isWorker) process.exit(code);
