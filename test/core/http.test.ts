import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fetchJson, HttpError, retryAfterMs } from '../../src/core/http.js';

describe('fetchJson against a flaky server on 127.0.0.1', () => {
  let server: Server;
  let base = '';
  let calls = 0;
  const sleeps: number[] = [];
  const sleep = async (ms: number) => void sleeps.push(ms);

  before(async () => {
    server = createServer((req, res) => {
      calls++;
      if (req.url === '/busy' && calls < 3) {
        res.writeHead(429, { 'retry-after': '2' }).end('slow down');
      } else if (req.url === '/down' ) {
        res.writeHead(503).end('unavailable');
      } else if (req.url === '/bad') {
        res.writeHead(400).end('{"error":"bad field"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, calls }));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('retries 429 honouring Retry-After, then succeeds', async () => {
    calls = 0;
    sleeps.length = 0;
    assert.deepEqual(await fetchJson(`${base}/busy`, { sleep }), { ok: true, calls: 3 });
    assert.deepEqual(sleeps, [2000, 2000]);
  });
  it('backs off exponentially with full jitter on 5xx, and gives up with the status', async () => {
    sleeps.length = 0;
    await assert.rejects(fetchJson(`${base}/down`, { sleep, retries: 3, baseDelayMs: 100, random: () => 1 }), (e: Error) => e instanceof HttpError && e.status === 503);
    assert.deepEqual(sleeps, [100, 200, 400]);
  });
  it('does not retry a 4xx', async () => {
    calls = 0;
    await assert.rejects(fetchJson(`${base}/bad`, { sleep }), /HTTP 400 .*bad field/);
    assert.equal(calls, 1);
  });
  it('names the URL when nothing listens', async () => {
    await assert.rejects(fetchJson('http://127.0.0.1:1/x', { sleep, retries: 1 }), /cannot reach http:\/\/127\.0\.0\.1:1\/x/);
  });
  it('parses Retry-After seconds and dates', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(retryAfterMs(null), undefined);
  });
});
