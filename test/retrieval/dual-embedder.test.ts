/** The dual encoder: queries and passages through their own models (MedCPT's pair), one vector size, the spec round-tripping. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEmbedder, type Embedder, type EmbedKind } from '../../src/retrieval/embedders/embedder.js';
import { DualEmbedder } from '../../src/retrieval/embedders/dual.js';

/** A stand-in encoder that records which kind of text it was given. */
function recorder(name: string, dim: number | undefined, seen: string[]): Embedder {
  return { spec: name, lexical: false, dim, embed: async (texts: readonly string[], kind: EmbedKind) => (seen.push(`${name}:${kind}:${texts.join(',')}`), texts.map(() => new Float32Array(dim ?? 4))) };
}

describe('dual encoder', () => {
  it('sends queries to the query encoder and passages to the passage encoder', async () => {
    const seen: string[] = [];
    const e = new DualEmbedder(recorder('q', 4, seen), recorder('p', 4, seen));
    await e.embed(['who?'], 'query');
    await e.embed(['a page', 'another'], 'passage');
    assert.deepEqual(seen, ['q:query:who?', 'p:passage:a page,another']);
    assert.equal(e.spec, 'dual:q|p');
    assert.equal(e.dim, 4);
  });

  it('is made from a spec, and refuses encoders of two vector sizes (at once, or on the first call for remote ones)', async () => {
    const e = await createEmbedder('dual:hash:64|hash:64');
    assert.equal(e.spec, 'dual:hash:64|hash:64');
    assert.equal((await e.embed(['x'], 'query'))[0]!.length, 64);
    await assert.rejects(createEmbedder('dual:hash:64|hash:32'), /the query encoder gives 64-dimensional vectors and the passage encoder 32/);
    await assert.rejects(createEmbedder('dual:hash:64'), /expected dual:<query spec>\|<passage spec>/);
    const late = new DualEmbedder(recorder('q', undefined, []), recorder('p', 4, []));
    Object.defineProperty(late.query, 'dim', { value: 8 });
    await assert.rejects(late.embed(['x'], 'query'), /gives 8-dimensional vectors and the passage encoder 4/);
  });
});
