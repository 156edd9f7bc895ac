/**
 * Serving on every core: `serve-retriever --processes N` and `serve-env --processes N` run N copies
 * of the server (node:cluster) sharing one listening socket. The first process (the supervisor) only
 * forks, prints the banner once all copies listen, and stops them: one signal, one graceful stop,
 * whatever the terminal sends to the whole process group.
 *
 * Why processes and not more threads: a server's HTTP parsing and JSON encoding run on its main
 * thread, which search threads (retrieval/pool.ts) cannot share; with N processes each has its own.
 * Each process opens the index itself; its files are memory-mapped or read through the page cache,
 * which the processes share.
 *
 * Copies that hold state (serve-env's episodes) reach each other over a private loopback port each
 * (`internalPort`), guarded by a secret the supervisor hands out; {@link onPeers} tells each copy
 * those ports, in process order, again whenever a copy is replaced.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';

/** What a copy tells the supervisor once it listens. */
export interface ReadyInfo {
  /** The shared port it listens on. */
  port: number;
  /** Its private loopback port for the other copies (serve-env), if any. */
  internalPort?: number;
  /** Lines the supervisor prints once every copy listens (the single-process banner). */
  banner: string[];
}

type ToSupervisor = { ragtrail: 'ready'; info: ReadyInfo } | { ragtrail: 'drained' };
type ToCopy = { ragtrail: 'peers'; ports: number[] } | { ragtrail: 'stop' } | { ragtrail: 'exit' };

/** Whether this process is one of a supervisor's copies. */
export function isServerCopy(): boolean {
  return cluster.isWorker && process.env['RAGTRAIL_PROCESS'] !== undefined;
}

/** This copy's place (0 … N-1) and the number of copies; {index: 0, count: 1} outside a cluster. */
export function copyIndex(): { index: number; count: number; secret: string } {
  if (!isServerCopy()) return { index: 0, count: 1, secret: '' };
  return { index: Number(process.env['RAGTRAIL_PROCESS']), count: Number(process.env['RAGTRAIL_PROCESSES']), secret: process.env['RAGTRAIL_PEER_SECRET'] ?? '' };
}

/** In a copy: tells the supervisor it listens. */
export function reportReady(info: ReadyInfo): void {
  process.send?.({ ragtrail: 'ready', info } satisfies ToSupervisor);
}

/** In a copy: calls `f` with every copy's internal port (in copy order) now and whenever one is replaced. */
export function onPeers(f: (ports: number[]) => void): void {
  process.on('message', (m: ToCopy) => {
    if (m?.ragtrail === 'peers') f(m.ports);
  });
}

/**
 * In a copy: `stop` runs when the supervisor says so. Signals are left to the supervisor (a
 * terminal's Ctrl-C reaches every process of the group; counted twice, it would stop at once).
 */
export function stopOnSupervisor(stop: (reason: string) => void): void {
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  process.on('message', (m: ToCopy) => {
    if (m?.ragtrail === 'stop') stop('stopping');
  });
}

/**
 * In a copy, once its public server has closed: tells the supervisor, and resolves when every copy
 * has (its private port stays open until then, so the peers' requests still in flight get answers).
 */
export function drained(): Promise<void> {
  return new Promise((resolve) => {
    process.on('message', (m: ToCopy) => {
      if (m?.ragtrail === 'exit') resolve();
    });
    process.send?.({ ragtrail: 'drained' } satisfies ToSupervisor);
  });
}

/**
 * The supervisor: forks `n` copies of this very command, the first alone (a bad flag, a port in use
 * or a missing index is then reported once, by it) and the others together, and resolves with the
 * first copy's ReadyInfo once all listen. A copy that fails to start stops them all and exits with its
 * status. Afterwards, a copy that dies is logged and replaced (serve-env's episodes it held are lost;
 * their clients get 404 and reset). SIGINT/SIGTERM stop every copy gracefully; a second signal kills them.
 */
export async function superviseCopies(n: number, log: (msg: string) => void): Promise<ReadyInfo> {
  const secret = randomBytes(16).toString('hex');
  const infos: (ReadyInfo | undefined)[] = new Array(n).fill(undefined);
  const copies: (Worker | undefined)[] = new Array(n).fill(undefined);
  let started = false;
  let stopping = false;
  const broadcast = () => {
    if (infos.some((i) => i === undefined)) return;
    const ports = infos.map((i) => i!.internalPort ?? 0);
    for (const w of copies) if (w?.isConnected()) w.send({ ragtrail: 'peers', ports } satisfies ToCopy);
  };
  const fork = (index: number): Promise<ReadyInfo> =>
    new Promise((resolve, reject) => {
      const w = cluster.fork({ RAGTRAIL_PROCESS: String(index), RAGTRAIL_PROCESSES: String(n), RAGTRAIL_PEER_SECRET: secret });
      copies[index] = w;
      let ready = false;
      w.on('message', (m: ToSupervisor) => {
        if (m?.ragtrail === 'drained') return onDrained(index);
        if (m?.ragtrail !== 'ready') return;
        ready = true;
        infos[index] = m.info;
        if (started) broadcast();
        resolve(m.info);
      });
      w.on('exit', (code, signal) => {
        onDrained(index);
        if (!ready) return reject(Object.assign(new Error(`process ${index} exited with ${signal ?? code}`), { code: code ?? 1 }));
        if (stopping) return;
        infos[index] = undefined;
        log(`process ${index} exited with ${signal ?? code}; starting a new one`);
        fork(index).catch((e: Error) => log(`process ${index} could not be restarted: ${e.message}`));
      });
    });
  // A graceful stop has two phases: every copy closes its public server and finishes its requests
  // (which may wait on a peer), then all exit together.
  const draining = new Set<number>();
  const onDrained = (index: number) => {
    if (!stopping || draining.has(index)) return;
    draining.add(index);
    if (draining.size < n) return;
    for (const w of copies) if (w?.isConnected()) w.send({ ragtrail: 'exit' } satisfies ToCopy);
  };
  const killAll = () => {
    for (const w of copies) if (w && !w.isDead()) w.process.kill('SIGKILL');
  };
  let first: ReadyInfo;
  try {
    first = await fork(0);
    await Promise.all(Array.from({ length: n - 1 }, (_, i) => fork(i + 1)));
  } catch (e) {
    stopping = true;
    killAll();
    // The copy printed its own error line; exit with its status, as the single-process server would.
    process.exit((e as { code?: number }).code || 1);
  }
  started = true;
  broadcast();
  const stop = (signal: string) => {
    if (stopping) {
      killAll();
      process.exit(1);
    }
    stopping = true;
    log(`${signal}: finishing in-flight requests in ${n} processes, then exiting`);
    copies.forEach((w, i) => (!w || w.isDead()) && onDrained(i));
    const live = copies.filter((w): w is Worker => w !== undefined && !w.isDead());
    void Promise.all(live.map((w) => new Promise((r) => (w.once('exit', r), w.send({ ragtrail: 'stop' } satisfies ToCopy))))).then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return first;
}

/** Whether this process should supervise copies instead of serving: more than one asked for, and not a copy itself. */
export function shouldSupervise(processes: number): boolean {
  return processes > 1 && cluster.isPrimary;
}
