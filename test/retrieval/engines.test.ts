/**
 * Elasticsearch / OpenSearch through their official clients, against a loopback fake node that
 * answers in the engines' documented shapes (no cluster can run here): the requests ragtrail sends
 * (index definition, bulk lines, search bodies) and how replies become hits.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { corpusFromQuestions, writeCorpus } from '../../src/corpus/corpus.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { buildEngineIndex, EngineRetriever, indexDefinition, parseEngineSpec, searchBody } from '../../src/retrieval/engines/search-engine.js';
import { HashedNgramEmbedder } from '../../src/retrieval/embedders/hashed.js';
import { openRetriever } from '../../src/retrieval/index-dir.js';
import { cliRunner, collectAll, data, tempDir } from '../helpers.js';
import { startFakeEngine, type FakeEngine } from './fake-search-engine.js';

const tmp = tempDir();
after(tmp.cleanup);
const corpus = join(tmp.dir, 'corpus.jsonl');
let passages = 0;

before(async () => {
  const { questions } = await loadDatasetAll(data('hotpotqa', 'distractor_dev_first53_official.json'));
  const ps = await collectAll(corpusFromQuestions(questions));
  passages = ps.length;
  await writeCorpus(corpus, ps);
});

describe('engine specs and request bodies', () => {
  it('parses es:/opensearch: specs and names the fix for bad ones', () => {
    assert.deepEqual(parseEngineSpec('es:http://127.0.0.1:9200#wiki'), { kind: 'es', url: 'http://127.0.0.1:9200', index: 'wiki' });
    assert.deepEqual(parseEngineSpec('opensearch:https://u:p@host:9200/#wiki-2018'), { kind: 'opensearch', url: 'https://u:p@host:9200/', index: 'wiki-2018' });
    assert.equal(parseEngineSpec('runs/index'), undefined);
    assert.throws(() => parseEngineSpec('es:http://host:9200'), /expected es:<http\(s\) URL>#<index name in lower case> \(e\.g\. es:http/);
    assert.throws(() => parseEngineSpec('opensearch:host#Wiki'), /expected opensearch:/);
  });

  it('index definitions: BM25 k1/b on the index, int8 HNSW vectors, the passage kept once', () => {
    const es = indexDefinition('es', { k1: 1.2, b: 0.75, dim: 768 }) as { settings: any; mappings: any };
    assert.deepEqual(es.settings.index.similarity.default, { type: 'BM25', k1: 1.2, b: 0.75 });
    assert.deepEqual(es.mappings.properties.vector, { type: 'dense_vector', dims: 768, index: true, similarity: 'dot_product', index_options: { type: 'int8_hnsw', m: 16, ef_construction: 100 } });
    assert.deepEqual(es.mappings._source, { excludes: ['contents', 'vector'] });
    const os = indexDefinition('opensearch', { k1: 0.9, b: 0.4, dim: 8 }) as { settings: any; mappings: any };
    assert.equal(os.settings.index.knn, true);
    assert.equal(os.mappings.properties.vector.type, 'knn_vector');
    assert.equal(os.mappings.properties.vector.space_type, 'innerproduct');
    assert.deepEqual(os.mappings.properties.vector.method.parameters.encoder, { name: 'sq', parameters: { bits: 7 } });
    assert.equal((indexDefinition('es', { k1: 0.9, b: 0.4 }) as any).mappings.properties.vector, undefined);
  });

  it('search bodies: match on contents, kNN, and each engine own fusion', () => {
    const v = Float32Array.from([0.6, 0.8]);
    assert.deepEqual(searchBody('es', 'bm25', { query: 'ed wood', k: 3 }), { size: 3, query: { match: { contents: 'ed wood' } }, _source: ['id', 'title', 'text'] });
    assert.deepEqual((searchBody('es', 'dense', { query: 'q', vector: v, k: 3 }) as any).knn, { field: 'vector', query_vector: [0.6000000238418579, 0.800000011920929], k: 3, num_candidates: 200 });
    const h = searchBody('es', 'hybrid', { query: 'q', vector: v, k: 3, depth: 50 }) as any;
    assert.equal(h.retriever.rrf.rank_constant, 60);
    assert.equal(h.retriever.rrf.rank_window_size, 50);
    assert.deepEqual(h.retriever.rrf.retrievers[0], { standard: { query: { match: { contents: 'q' } } } });
    assert.deepEqual((searchBody('opensearch', 'dense', { query: 'q', vector: v, k: 3 }) as any).query, { knn: { vector: { vector: [0.6000000238418579, 0.800000011920929], k: 3 } } });
    assert.equal((searchBody('opensearch', 'hybrid', { query: 'q', vector: v, k: 3 }) as any).query.hybrid.queries.length, 2);
  });
});

for (const kind of ['es', 'opensearch'] as const) {
  describe(`${kind}: bulk load and search through the official client`, () => {
    let engine: FakeEngine;
    before(async () => {
      engine = await startFakeEngine();
    });
    after(async () => engine.close());
    const embedder = new HashedNgramEmbedder(256);

    it('creates the index, bulk-loads in batches, resumes after a failed batch without resending', async () => {
      const spec = parseEngineSpec(`${kind}:${engine.url}#hotpot`)!;
      engine.failBulk = 3;
      await assert.rejects(buildEngineIndex(corpus, spec, { embedder, batchSize: 100, quiet: true }), /bulk load failed at passage 201: document_parsing_exception injected failure \(re-run the same command to resume/);
      const create = engine.requests.find((r) => r.method === 'PUT' && r.path === '/hotpot')!;
      assert.deepEqual((create.body as any).settings.index.similarity.default, { type: 'BM25', k1: 0.9, b: 0.4 });
      assert.equal((create.body as any).mappings._meta.ragtrail.dim, 256);
      const bulk = engine.requests.find((r) => r.path === '/_bulk')!;
      const lines = bulk.body as any[];
      assert.equal(lines.length, 200);
      assert.deepEqual(Object.keys(lines[1]), ['id', 'title', 'text', 'contents', 'vector']);
      assert.equal(lines[1].contents, `${lines[1].title}\n${lines[1].text}`);
      assert.equal(engine.indices.get('hotpot')!.mappings._meta!['ragtrail'] && (engine.indices.get('hotpot')!.mappings._meta!['ragtrail'] as any).passages, 200);
      const sentBefore = engine.bulkDocs;
      engine.failBulk = undefined;
      const meta = await buildEngineIndex(corpus, spec, { embedder, batchSize: 100, quiet: true });
      assert.equal(meta.passages, passages);
      assert.equal(meta.complete, true);
      assert.equal(engine.bulkDocs - sentBefore, passages - 200); // only the rest was sent
      assert.equal(engine.indices.get('hotpot')!.docs.size, passages);
      assert.equal(engine.requests.some((r) => r.path.startsWith('/_search/pipeline/')), kind === 'opensearch');
    });

    it('bm25, dense and hybrid searches go out as one _msearch per batch and come back as hits', async () => {
      for (const method of ['bm25', 'dense', 'hybrid'] as const) {
        const r = await openRetriever(`${kind}:${engine.url}#hotpot`, { method, embedder });
        assert.match(r.name, new RegExp(`^${kind}\\(hotpot, ${method}`));
        engine.requests.length = 0;
        const [a, b] = await r.searchBatch(['Scott Derrickson', 'Woodson Arkansas census'], 3);
        const ms = engine.requests.filter((q) => q.path === '/hotpot/_msearch');
        assert.equal(ms.length, 1, method);
        assert.equal((ms[0]!.body as unknown[]).length, 4);
        assert.equal(ms[0]!.query['search_pipeline'], kind === 'opensearch' && method === 'hybrid' ? 'ragtrail-rrf' : undefined);
        assert.equal(a!.length, 3);
        assert.ok(a!.some((h) => h.title === 'Scott Derrickson'), method);
        assert.ok(b!.some((h) => /Woodson, Arkansas/.test(h.title)), method);
        assert.ok(a![0]!.passageId.startsWith('ctx-') && a![0]!.text.length > 0);
        await r.close?.();
      }
    });

    it('an index ragtrail did not build, or one without vectors, says so', async () => {
      const spec = parseEngineSpec(`${kind}:${engine.url}#plain`)!;
      await buildEngineIndex(corpus, spec, { batchSize: 1000, quiet: true });
      await assert.rejects(EngineRetriever.open(spec, { method: 'dense' }), /holds no vectors \(load it with --dense --embedder SPEC/);
      await assert.rejects(openRetriever(`${kind}:${engine.url}#nothing`), /HTTP 404: no such index \[nothing\]/);
    });
  });
}

describe('CLI: index build --to and search --index against an engine', () => {
  it('loads and searches', async () => {
    const engine = await startFakeEngine();
    try {
      const cli = cliRunner(tmp.dir);
      const built = await cli.runAsync('index', 'build', '--corpus', corpus, '--to', `es:${engine.url}#cli`, '--k1', '1.2', '--b', '0.75');
      assert.equal(built.status, 0, built.stderr);
      assert.match(built.stdout, new RegExp(`loaded ${passages} passages into es:`));
      assert.deepEqual((engine.indices.get('cli')!.settings as any).index.similarity.default, { type: 'BM25', k1: 1.2, b: 0.75 });
      const found = await cli.runAsync('search', '--index', `es:${engine.url}#cli`, '--k', '2', 'Ed Wood film');
      assert.equal(found.status, 0, found.stderr);
      assert.match(found.stdout, /^es\(cli, bm25\): 2 hits/);
      const bad = cli.run('index', 'build', '--corpus', corpus, '--out', join(tmp.dir, 'x'), '--to', `es:${engine.url}#cli`);
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /give either --out DIR .* or --to ENGINE/);
    } finally {
      await engine.close();
    }
  });
});
