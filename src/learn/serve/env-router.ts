/**
 * `serve-env --processes N`: episodes live in the memory of one process each, so each HTTP request
 * goes to the process that holds its episodes, whichever process the connection landed on.
 *
 * An episode's process is fixed by its id (a hash modulo N), so it is known before the episode exists
 * and never moves. OpenEnv's HTTP calls (/reset, /step, /state) name one episode (or the default
 * one) and are forwarded whole; a verl-tool /get_observation call names many, and is cut into one
 * part per process, the parts stepped at the same time, the replies put back in the call's order.
 * A WebSocket's episode lives in the process holding the connection, which carries every message of it.
 *
 * Forwarding goes over each process's private loopback port (core/cluster.ts), guarded by a secret,
 * to the same server code without routing. So every answer is the one process's answer: a call with a
 * trajectory naming no question is refused whole before any is stepped (the processes holding the
 * trajectories it names are asked first whether they hold them).
 */
import { Agent, request } from 'node:http';
import { HttpError } from '../../core/http-server.js';
import type { EnvService } from './env-service.js';

/** The other processes of a multi-process serve-env, as one process sees them. */
export interface EnvPeers {
  /** This process's place, 0 … count-1. */
  readonly self: number;
  readonly count: number;
  /** The process that holds episode `id`. */
  owner(id: string): number;
  /** Sends a request to process `owner`'s private port; resolves with its status and JSON reply. */
  forward(owner: number, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

/** FNV-1a over the id's UTF-16 units: stable across processes and runs. */
function hash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Peers on loopback ports given later (`setPorts`, once every process listens), with the shared secret as bearer token. */
export function loopbackPeers(self: number, count: number, secret: string): EnvPeers & { setPorts(ports: number[]): void } {
  let ports: number[] = [];
  const agent = new Agent({ keepAlive: true });
  return {
    self,
    count,
    owner: (id) => hash(id) % count,
    setPorts(p) {
      ports = p;
    },
    forward(owner, method, path, body) {
      const port = ports[owner];
      if (!port) return Promise.reject(new HttpError(503, `process ${owner}, which holds this episode, is not serving (restarting?); retry`));
      const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      return new Promise((resolve, reject) => {
        const headers: Record<string, string | number> = { authorization: `Bearer ${secret}` };
        if (data) Object.assign(headers, { 'content-type': 'application/json', 'content-length': data.length });
        const req = request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 500, body: text === '' ? undefined : JSON.parse(text) });
            } catch {
              reject(new Error(`process ${owner} answered ${path} with something that is not JSON`));
            }
          });
          res.on('error', reject);
        });
        req.on('error', (e) => reject(new Error(`process ${owner}, which holds this episode, did not answer: ${e.message}`)));
        req.end(data);
      });
    },
  };
}

/** The internal route that tells another process which of these episodes this one holds. */
export const HAS_ROUTE = '/internal/has';

export function answerHas(service: EnvService, body: Record<string, unknown>): { has: boolean[] } {
  const ids = body['ids'];
  if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) throw new HttpError(400, '"ids" must be a list of strings');
  return { has: ids.map((id) => service.has(id as string)) };
}

/** A whole request for episode `id` (OpenEnv HTTP): forwarded when another process holds it, else undefined. */
export async function forwardEpisode(peers: EnvPeers, id: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown } | undefined> {
  const owner = peers.owner(id);
  return owner === peers.self ? undefined : peers.forward(owner, method, path, body);
}

type Observation = { observations: unknown[]; dones: boolean[]; valids: boolean[] };
const PER_TRAJECTORY = ['trajectory_ids', 'actions', 'finish', 'is_last_step', 'extra_fields'] as const;

/**
 * verl-tool's /get_observation over several processes. `body` has passed the one-process shape checks;
 * `identify` is the one-process check of a new trajectory's question (throws the one-process 422), and
 * `local` steps a part held here. A trajectory whose check fails is refused only if no process holds it,
 * as in one process.
 */
export async function routedObservation(
  service: EnvService,
  peers: EnvPeers,
  body: Record<string, unknown>,
  identify: (i: number) => void,
  local: (part: Record<string, unknown>) => Promise<Observation>,
): Promise<Observation> {
  const ids = (body['trajectory_ids'] as (string | number)[]).map((x) => `verl:${String(x)}`);
  const finish = body['finish'] as unknown[] | undefined;
  const owners = ids.map((id) => peers.owner(id));
  // Which trajectories fail the question check: those are refused unless their process holds them.
  const failing: { i: number; error: unknown }[] = [];
  ids.forEach((_, i) => {
    if (finish?.[i] === true) return;
    try {
      identify(i);
    } catch (e) {
      failing.push({ i, error: e });
    }
  });
  if (failing.length > 0) {
    const held = new Map<number, boolean>();
    const byOwner = new Map<number, number[]>();
    for (const { i } of failing) byOwner.set(owners[i]!, [...(byOwner.get(owners[i]!) ?? []), i]);
    await Promise.all(
      [...byOwner].map(async ([owner, is]) => {
        let has: boolean[];
        if (owner === peers.self) has = is.map((i) => service.has(ids[i]!));
        else {
          const r = await peers.forward(owner, 'POST', HAS_ROUTE, { ids: is.map((i) => ids[i]!) });
          if (r.status !== 200) throw new HttpError(502, `process ${owner} did not say which episodes it holds (HTTP ${r.status})`);
          has = (r.body as { has: boolean[] }).has;
        }
        is.forEach((i, j) => held.set(i, has[j]!));
      }),
    );
    const refused = failing.find(({ i }) => !held.get(i));
    if (refused) throw refused.error;
  }
  const parts = new Map<number, number[]>();
  owners.forEach((o, i) => parts.set(o, [...(parts.get(o) ?? []), i]));
  const partBody = (is: number[]) => {
    const part: Record<string, unknown> = {};
    for (const key of PER_TRAJECTORY) {
      const v = body[key];
      if (Array.isArray(v) && v.length === ids.length) part[key] = is.map((i) => v[i]);
    }
    return part;
  };
  const out: Observation = { observations: new Array(ids.length), dones: new Array(ids.length), valids: new Array(ids.length) };
  // The other processes' parts are sent first and flushed (a turn of the event loop) before this
  // process steps its own, which may search synchronously: so they run at the same time.
  const order = [...parts].sort(([a], [b]) => Number(a === peers.self) - Number(b === peers.self));
  await Promise.all(
    order.map(async ([owner, is]) => {
      let r: Observation;
      if (owner === peers.self) {
        await new Promise((resolve) => setImmediate(resolve));
        r = await local(partBody(is));
      } else {
        const reply = await peers.forward(owner, 'POST', '/get_observation', partBody(is));
        if (reply.status !== 200) {
          const b = reply.body as { error?: string } | undefined;
          throw new HttpError(reply.status, b?.error ?? `process ${owner} answered HTTP ${reply.status}`);
        }
        r = reply.body as Observation;
      }
      is.forEach((i, j) => {
        out.observations[i] = r.observations[j];
        out.dones[i] = r.dones[j]!;
        out.valids[i] = r.valids[j]!;
      });
    }),
  );
  return out;
}
