// The documentation site (VitePress; built by `npm run docs`, tooling in tools/docs). A plain object
// rather than `defineConfig`: VitePress is installed in tools/docs, not beside this file.
export default {
  title: 'ragtrail',
  description: 'Agentic RAG trained and steered with process-level rewards: environment, agents, process supervision, reward models, evaluation.',
  // Relative asset paths, so the built site opens from any folder or host path.
  base: process.env.RAGTRAIL_DOCS_BASE ?? '/',
  cleanUrls: false,
  lastUpdated: false,
  // The API reference is TypeDoc's HTML, copied in from public/api after VitePress has checked its own pages.
  ignoreDeadLinks: [/^\/api\//, /^\.\.?\/api\//],
  themeConfig: {
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'Guides', link: '/guides/' },
      { text: 'Papers', link: '/papers/' },
      { text: 'Reference', link: '/reference/' },
      { text: 'Benchmarks', link: '/benchmarks/' },
      { text: 'API', link: '/api/index.html', target: '_self' },
    ],
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    sidebar: [
      { text: 'Start', items: [
        { text: 'What ragtrail is', link: '/' },
        { text: 'Getting started', link: '/getting-started' },
      ] },
      { text: 'Guides', items: [
        { text: 'Overview', link: '/guides/' },
        { text: 'Annotate with your served model', link: '/guides/annotate-served-model' },
        { text: 'Train an LLM with TRL', link: '/guides/train-with-trl' },
        { text: 'Serve the environment (verl-tool, OpenEnv, TRL)', link: '/guides/serve-environment' },
        { text: 'Serve the retriever to Search-R1', link: '/guides/serve-retriever' },
        { text: 'Reproduce a paper with its recipe', link: '/guides/reproduce-a-paper' },
        { text: 'Use the library', link: '/guides/library' },
        { text: 'Write a plugin', link: '/guides/plugins' },
      ] },
      { text: 'Papers', items: [
        { text: 'How claims are tested', link: '/papers/' },
        { text: 'ReasonRAG', link: '/papers/reasonrag' },
        { text: 'RAG-Gym', link: '/papers/rag-gym' },
        { text: 'LWS', link: '/papers/lws' },
        { text: 'ProRAG', link: '/papers/prorag' },
        { text: 'ARENA', link: '/papers/arena' },
        { text: 'The comparison behind the demo', link: '/papers/comparison' },
      ] },
      { text: 'Reference', items: [
        { text: 'Commands', link: '/reference/' },
        { text: 'The main job: demo', link: '/reference/demo' },
        { text: 'The synthetic world', link: '/reference/world' },
        { text: 'Datasets and corpora', link: '/reference/datasets' },
        { text: 'Retrieval', link: '/reference/retrieval' },
        { text: 'Agents and runs', link: '/reference/agents' },
        { text: 'Rewards', link: '/reference/rewards' },
        { text: 'compat=authors differences', link: '/reference/compat' },
        { text: 'Process supervision', link: '/reference/annotate' },
        { text: 'PRMs and guided inference', link: '/reference/prm' },
        { text: 'Evaluation', link: '/reference/eval' },
        { text: 'Training', link: '/reference/train' },
        { text: 'The LLM loop', link: '/reference/llm-loop' },
        { text: 'GGUF and embedded LLMs', link: '/reference/gguf' },
        { text: 'Online RL: serve-env', link: '/reference/serve-env' },
        { text: 'Past one machine', link: '/reference/scale' },
        { text: 'Reliability', link: '/reference/reliability' },
        { text: 'Metrics', link: '/reference/metrics' },
      ] },
      { text: 'Benchmarks', items: [
        { text: 'At a glance', link: '/benchmarks/' },
        { text: 'Retrieval: runs and design notes', link: '/benchmarks/retrieval' },
        { text: 'The gym', link: '/benchmarks/gym' },
      ] },
      { text: 'Project', items: [
        { text: 'Development', link: '/development' },
        { text: 'Changelog', link: '/changelog' },
        { text: 'API reference', link: '/api/index.html', target: '_self' },
      ] },
    ],
  },
};
