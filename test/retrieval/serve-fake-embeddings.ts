/** Runs the fake /v1/embeddings server in its own process (for bench:embed): prints its URL, serves until killed. */
import { parseArgs } from 'node:util';
import { startFakeEmbeddings } from './fake-embeddings.js';

const { values } = parseArgs({ options: { dim: { type: 'string', default: '768' }, delay: { type: 'string', default: '50' }, slots: { type: 'string', default: '1' } } });
const server = await startFakeEmbeddings({ dim: Number(values.dim), delayMs: Number(values.delay), slots: Number(values.slots), cachedReply: true });
console.log(server.url);
