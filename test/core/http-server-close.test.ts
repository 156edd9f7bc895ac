/**
 * gracefulCloser against real sockets on 127.0.0.1: a reply that was ended but is still being written
 * when the server closes must reach the client whole (Node 20's close() destroyed such a connection:
 * a 32 MiB reply arrived cut after ~3.9 MB), and a reply still in progress must be answered and its
 * connection closed after it, so the server's close completes without a keep-alive timeout.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { gracefulCloser } from '../../src/core/http-server.js';

const BIG = Buffer.alloc(32 << 20, 0x61);

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** POSTs to the server; the reply is read only after `pauseMs`, as a slow client would. */
function slowRead(port: number, pauseMs: number): Promise<{ bytes: number; complete: boolean; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res: IncomingMessage) => {
      let bytes = 0;
      res.pause();
      setTimeout(() => {
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.resume();
      }, pauseMs);
      res.on('end', () => resolve({ bytes, complete: res.complete, connection: res.headers.connection }));
      res.on('aborted', () => resolve({ bytes, complete: false }));
      res.on('error', () => resolve({ bytes, complete: false }));
    });
    req.on('error', reject);
    req.end('go');
  });
}

describe('gracefulCloser', () => {
  it('lets a reply ended just before the close be written out whole (32 MiB, slow client)', async () => {
    let close!: () => Promise<void>;
    let closed: Promise<void> | undefined;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-length': BIG.length });
        res.end(BIG);
        closed = close(); // while most of the reply still waits in the socket's buffer
      });
    });
    close = gracefulCloser(server);
    const got = await slowRead(await listen(server), 300);
    assert.deepEqual({ bytes: got.bytes, complete: got.complete }, { bytes: BIG.length, complete: true });
    await closed;
    assert.equal(server.listening, false);
  });

  it('answers a request still in progress, with Connection: close, and then finishes closing', async () => {
    let close!: () => Promise<void>;
    let closed: Promise<void> | undefined;
    const server = createServer((req, res) => {
      req.resume();
      setTimeout(() => (closed = close()), 20); // the stop arrives while this request is being handled
      setTimeout(() => {
        res.writeHead(200, { 'content-length': BIG.length });
        res.end(BIG);
      }, 100);
    });
    close = gracefulCloser(server);
    const t0 = performance.now();
    const got = await slowRead(await listen(server), 200);
    assert.deepEqual(got, { bytes: BIG.length, complete: true, connection: 'close' });
    await closed;
    // Closed once the reply was out, not after Node's 5 s keep-alive timeout.
    assert.ok(performance.now() - t0 < 3000, `closed after ${(performance.now() - t0).toFixed(0)} ms`);
  });
});
