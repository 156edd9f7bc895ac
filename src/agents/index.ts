/**
 * `ragtrail/agents`: protocols (how a state becomes a prompt and a reply becomes an action; parsers
 * never throw) and policies (what proposes the next action: an LLM, or a non-LLM stand-in). Register
 * your own with `registerProtocol` and `registerPolicy`.
 * @module
 */
export { adaptiveRag } from './adaptive-rag.js';
export { skr } from './skr.js';
export { type SelfRagOptions, selfRagProtocol } from './self-rag.js';
export { compressedRag, type CompressedRagSpec, type Compressor } from './compressed-rag.js';
export { RECOMP_DEFAULT_EMBEDDER, RECOMP_TOP_N, recompAbstractive, type RecompAbstractiveOptions, recompExtractive, type RecompExtractiveOptions } from './recomp.js';
export { longLlmLingua, type LongLLMLinguaOptions } from './longllmlingua.js';
export { type LexicalUnit, SELECTIVE_CONTEXT_RATIO, selectiveContext, type SelectiveContextOptions } from './selective-context.js';
export { type RoutedProtocol, routedProtocol, type RouterSpec } from './router.js';
export { AGENT_NAMES, type AgentName, type Protocol, type ProtocolDefaults, type RenderOptions, type TemplateField, type TemplateFill, type TemplateHooks, type TemplateKind, firstTag, formatDocs, invalid, tagContent } from './protocol.js';
export { checkPromptTemplate, fillTemplate, loadPromptTemplate, parsePromptTemplate, placeholders, type PromptTemplate, templateFields, type TemplateSection, usePromptTemplate, withPromptTemplate } from './prompt-template.js';
export { getProtocol, PROTOCOLS, protocolNames, protocols, registerProtocol } from './registry.js';
export { LlmPolicy, type LlmPolicyOptions, type Policy, type PolicyKind, PolicyWrapper, type ProposeOptions } from './policy.js';
export { createPolicy, POLICY_SPEC_HELP, policies, type PolicyFactory, type PolicyOptions, registerPolicy } from './policies.js';
export { OraclePolicy } from './oracle.js';
export { SimPolicy } from './sim.js';
