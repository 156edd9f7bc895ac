/**
 * A loopback stand-in for the Hugging Face Hub: `/datasets/{repo}/resolve/{rev}/{path}` answers a
 * plain file with 200 and its git blob sha1 as ETag, and an LFS file with a 302 to a second server
 * (the "CDN", another origin) carrying X-Linked-Etag (sha256), X-Linked-Size and X-Repo-Commit, as
 * the Hub does. Both honour `Range: bytes=N-`. `/api/datasets/{repo}/tree/{rev}/{folder}` lists a
 * folder as the Hub's tree API does (`{type, oid, size, path, lfs?: {oid, size, pointerSize}}`, pages
 * linked by `Link: <…>; rel="next"`). Faults on demand: a connection dropped after K bytes, a corrupted
 * body, a server that states no checksum, a failing listing. Every request is logged.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';

export interface FixtureFile {
  path: string;
  body: Buffer;
  /** Stored with LFS: served through the CDN redirect. */
  lfs: boolean;
}

export interface Logged {
  server: 'hub' | 'cdn';
  url: string;
  range?: string;
  authorization?: string;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
export const gitSha1 = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

export interface Hub {
  endpoint: string;
  repo: string;
  commit: string;
  log: Logged[];
  files: Map<string, FixtureFile>;
  /** Next transfer of `path` stops after `bytes` body bytes (connection destroyed); `times` transfers in a row. */
  dropAfter(path: string, bytes: number, times?: number): void;
  /** Next transfer of `path` sends `bytes` body bytes and then nothing, keeping the connection open. */
  stallAfter(path: string, bytes: number): void;
  /** Serve the next transfer of `path` with one byte flipped (same length, so only the checksum can tell). */
  corrupt(path: string): void;
  /** Serve without any checksum header (a bare mirror). */
  noChecksum(path: string): void;
  /** Tree listings in pages of `n` entries (default: one page). */
  pageListings(n: number): void;
  /** The next `times` listing requests answer `status`. */
  failListing(status: number, times?: number): void;
  close(): Promise<void>;
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

export async function startHub(fixtures: FixtureFile[], repo = 'RUC-NLPIR/FlashRAG_datasets'): Promise<Hub> {
  const files = new Map(fixtures.map((f) => [f.path, f]));
  const log: Logged[] = [];
  const drops = new Map<string, { bytes: number; times: number }>();
  const stalls = new Map<string, number>();
  const corrupted = new Set<string>();
  const bare = new Set<string>();
  const commit = 'c0ffee0000000000000000000000000000000001';
  let pageSize = Infinity;
  let listingFault = { status: 0, times: 0 };

  /** Sends `body` honouring Range, with the faults armed for `path`. */
  function serve(req: IncomingMessage, res: ServerResponse, path: string, headers: Record<string, string>): void {
    let body = files.get(path)!.body;
    if (corrupted.delete(path)) {
      body = Buffer.from(body);
      body[Math.floor(body.length / 2)]! ^= 0x20;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    let start = 0;
    let status = 200;
    const h: Record<string, string> = { ...headers, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (m) {
      start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { ...h, 'content-range': `bytes */${body.length}` });
        res.end();
        return;
      }
      status = 206;
      h['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    }
    const slice = body.subarray(start);
    h['content-length'] = String(slice.length);
    res.writeHead(status, h);
    const stall = stalls.get(path);
    if (stall !== undefined) {
      stalls.delete(path);
      res.write(slice.subarray(0, stall));
      return;
    }
    const drop = drops.get(path);
    if (drop && drop.times > 0) {
      drop.times--;
      // Headers promise the whole length; the connection closes after `bytes` of it. A clean close
      // (FIN, not RST) so that exactly those bytes reach the client before it sees the cut.
      res.write(slice.subarray(0, drop.bytes));
      res.socket?.end();
      return;
    }
    res.end(slice);
  }

  const cdn = await listen((req, res) => {
    log.push({ server: 'cdn', url: req.url ?? '', range: req.headers.range, authorization: req.headers.authorization });
    const m = /^\/blob\/([0-9a-f]{64})\?path=(.+)$/.exec(req.url ?? '');
    const path = m ? decodeURIComponent(m[2]!) : '';
    if (!m || !files.has(path)) {
      res.writeHead(404).end('no such blob');
      return;
    }
    // The CDN's own ETag is not the file's sha256; a client must not read it as one.
    serve(req, res, path, { etag: '"d41d8cd98f00b204e9800998ecf8427e-12"' });
  });

  const prefix = `/datasets/${repo}/resolve/`;
  const treePrefix = `/api/datasets/${repo}/tree/`;
  /** The tree API: the entries directly in `folder` (files and folders), sorted, `cursor` onwards. */
  function listTree(res: ServerResponse, folder: string, cursor: number, self: string): void {
    if (listingFault.times > 0) {
      listingFault.times--;
      res.writeHead(listingFault.status, { 'content-type': 'text/plain' }).end('listing failed');
      return;
    }
    const dir = folder.replace(/\/+$/, '');
    const under = [...files.values()].filter((f) => f.path.startsWith(`${dir}/`));
    if (under.length === 0) {
      res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'content-type': 'application/json' }).end(JSON.stringify({ error: `${dir} does not exist` }));
      return;
    }
    const entries = new Map<string, unknown>();
    for (const f of under) {
      const rest = f.path.slice(dir.length + 1);
      if (rest.includes('/')) {
        const sub = `${dir}/${rest.split('/')[0]}`;
        entries.set(sub, { type: 'directory', oid: '0'.repeat(40), size: 0, path: sub });
        continue;
      }
      if (f.lfs) {
        const pointer = Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(f.body)}\nsize ${f.body.length}\n`);
        entries.set(f.path, { type: 'file', oid: gitSha1(pointer), size: f.body.length, path: f.path, lfs: { oid: sha256(f.body), size: f.body.length, pointerSize: pointer.length } });
      } else {
        entries.set(f.path, { type: 'file', oid: gitSha1(f.body), size: f.body.length, path: f.path });
      }
    }
    const all = [...entries.keys()].sort().map((k) => entries.get(k));
    const page = all.slice(cursor, cursor + pageSize);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (cursor + pageSize < all.length) headers['link'] = `<${self}?cursor=${cursor + pageSize}>; rel="next"`;
    res.writeHead(200, headers).end(JSON.stringify(page));
  }

  const hub = await listen((req, res) => {
    log.push({ server: 'hub', url: req.url ?? '', range: req.headers.range, authorization: req.headers.authorization });
    const url = decodeURIComponent(req.url ?? '');
    if (url.startsWith(treePrefix)) {
      const [path, query] = url.split('?');
      const rest = path!.slice(treePrefix.length);
      const folder = rest.slice(rest.indexOf('/') + 1);
      const cursor = Number(/(?:^|&)cursor=(\d+)/.exec(query ?? '')?.[1] ?? 0);
      listTree(res, folder, cursor, `http://${req.headers.host}${(req.url ?? '').split('?')[0]}`);
      return;
    }
    if (!url.startsWith(prefix)) {
      res.writeHead(404).end('Repository not found');
      return;
    }
    const rest = url.slice(prefix.length);
    const slash = rest.indexOf('/');
    const path = rest.slice(slash + 1);
    const f = files.get(path);
    if (!f) {
      res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': commit }).end('Entry not found');
      return;
    }
    if (f.lfs) {
      const sum = sha256(f.body);
      const h: Record<string, string> = { location: `${cdn.origin}/blob/${sum}?path=${encodeURIComponent(path)}`, 'x-repo-commit': commit, 'content-length': '0' };
      if (!bare.has(path)) Object.assign(h, { etag: `"${sum}"`, 'x-linked-etag': `"${sum}"`, 'x-linked-size': String(f.body.length) });
      res.writeHead(302, h).end();
      return;
    }
    serve(req, res, path, bare.has(path) ? {} : { etag: `"${gitSha1(f.body)}"`, 'x-repo-commit': commit });
  });

  return {
    endpoint: hub.origin,
    repo,
    commit,
    log,
    files,
    dropAfter: (path, bytes, times = 1) => drops.set(path, { bytes, times }),
    stallAfter: (path, bytes) => stalls.set(path, bytes),
    corrupt: (path) => corrupted.add(path),
    noChecksum: (path) => bare.add(path),
    pageListings: (n) => (pageSize = n),
    failListing: (status, times = 1) => (listingFault = { status, times }),
    close: async () => {
      for (const s of [hub.server, cdn.server]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const { server } = await listen(() => undefined);
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A zip archive, deflated; with `zip64` every size and offset goes through the ZIP64 extra field and
 * end records, as in archives over 4 GB such as wiki18_100w.zip.
 */
export function makeZip(entries: { name: string; data: Buffer; store?: boolean }[], zip64 = false): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const comp = e.store ? e.data : zlib.deflateRawSync(e.data);
    const crc = zlib.crc32(e.data);
    const method = e.store ? 0 : 8;
    const extra64 = (values: number[]) => {
      const b = Buffer.alloc(4 + 8 * values.length);
      b.writeUInt16LE(0x0001, 0);
      b.writeUInt16LE(8 * values.length, 2);
      values.forEach((v, i) => b.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
      return b;
    };
    const lExtra = zip64 ? extra64([e.data.length, comp.length]) : Buffer.alloc(0);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(zip64 ? 45 : 20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(zip64 ? 0xffffffff : comp.length, 18);
    local.writeUInt32LE(zip64 ? 0xffffffff : e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(lExtra.length, 28);
    locals.push(local, name, lExtra, comp);
    const cExtra = zip64 ? extra64([e.data.length, comp.length, offset]) : Buffer.alloc(0);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(zip64 ? 45 : 20, 4);
    central.writeUInt16LE(zip64 ? 45 : 20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(zip64 ? 0xffffffff : comp.length, 20);
    central.writeUInt32LE(zip64 ? 0xffffffff : e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(cExtra.length, 30);
    central.writeUInt32LE(zip64 ? 0xffffffff : offset, 42);
    centrals.push(central, name, cExtra);
    offset += 30 + name.length + lExtra.length + comp.length;
  }
  const cd = Buffer.concat(centrals);
  const tail: Buffer[] = [];
  if (zip64) {
    const rec = Buffer.alloc(56);
    rec.writeUInt32LE(0x06064b50, 0);
    rec.writeBigUInt64LE(44n, 4);
    rec.writeUInt16LE(45, 12);
    rec.writeUInt16LE(45, 14);
    rec.writeBigUInt64LE(BigInt(entries.length), 24);
    rec.writeBigUInt64LE(BigInt(entries.length), 32);
    rec.writeBigUInt64LE(BigInt(cd.length), 40);
    rec.writeBigUInt64LE(BigInt(offset), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(offset + cd.length), 8);
    loc.writeUInt32LE(1, 16);
    tail.push(rec, loc);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(zip64 ? 0xffff : entries.length, 8);
  eocd.writeUInt16LE(zip64 ? 0xffff : entries.length, 10);
  eocd.writeUInt32LE(zip64 ? 0xffffffff : cd.length, 12);
  eocd.writeUInt32LE(zip64 ? 0xffffffff : offset, 16);
  return Buffer.concat([...locals, cd, ...tail, eocd]);
}
