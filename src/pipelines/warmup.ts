/**
 * Warm-up data for a language model trained from random weights: the LLM loop's stand-in for
 * pretraining.
 *
 * An agent writes names it has read (in the question, in a retrieved passage) into its next query
 * and its answer. A pretrained LLM arrives able to copy; a tiny transformer trained from scratch on a
 * few thousand agent transcripts does not learn it in CPU minutes. Copy examples — a passage, then
 * the same passage again — make every target token a copy of an earlier one, a dense signal under
 * which the model's copying (induction-style) circuit forms in a couple of thousand steps; SFT on the
 * transcripts then starts from a model that can copy.
 *
 * Measured on the loop's default world (4 layers × 128): without the warm-up, after 660 SFT steps the
 * model wrote the exact next query in 2 of 245 turns of its own training transcripts (teacher-forced);
 * after 2,400 warm-up steps (loss 0.22) and one SFT epoch, 116 of 245 turns of held-out transcripts.
 * Reading examples (a passage and a single-hop question, then the answer) were tried as well and
 * taught nothing that held out at this scale (12 of 150 held-out single-hop questions answered with
 * 3,900 or 11,500 examples, 1,000 or 4,300 steps), so they are not part of the warm-up.
 *
 * The copy examples alone teach copying from the start of a turn, not from anywhere: an agent
 * fine-tuned after them to quote its evidence wrote a sentence that is verbatim in the shown documents
 * in 20 of 517 quotes on held-out questions. A second stage of quote examples (below; 2 epochs, 7
 * minutes) raised that to 137 of 507, and the SFT loss after one epoch fell from 0.51 to 0.32.
 */
import { quoteOf } from '../agents/gold.js';
import { formatDocs } from '../agents/protocol.js';
import { Rng } from '../core/rng.js';
import { sentencesOf } from '../core/text.js';
import type { Message, RetrievedDoc } from '../core/trajectory.js';
import type { Passage } from '../core/types.js';

export interface ChatExample {
  messages: Message[];
}

/** A passage as a search would show it. */
function asShown(p: Passage): RetrievedDoc {
  return { passageId: p.id, title: p.title, text: p.text, score: 0 };
}

/** A passage shown the way the agent protocols show a retrieved document, then repeated by the assistant. */
export function copyExample(p: Passage): ChatExample {
  const shown = formatDocs([asShown(p)]);
  return { messages: [{ role: 'user', content: shown }, { role: 'assistant', content: shown }] };
}

/**
 * Quote examples, the warm-up's second stage: `docs` passages shown as one search result, then every
 * sentence of them quoted (`"Title" says: sentence`, the demonstrations' grounding format) in a random
 * order. Copying from a random place in the context, not from the start of the turn, makes the copy
 * work by matching content (induction) rather than by position; it is what quoting evidence in a
 * thought needs. One example per passage, with `docs - 1` other passages drawn at random.
 */
export function quoteExamples(passages: readonly Passage[], opts: { docs: number; seed: number }): ChatExample[] {
  const rng = Rng.derive(opts.seed, 'quote warm-up');
  return passages.map((p, i) => {
    const picked = new Set([i]);
    while (picked.size < Math.min(opts.docs, passages.length)) picked.add(rng.int(passages.length));
    const shown = rng.shuffle([...picked].map((k) => passages[k]!));
    const quotes = rng.shuffle(shown.flatMap((d) => sentencesOf(d.text).map((s) => quoteOf(d.title, s))));
    return {
      messages: [
        { role: 'user', content: formatDocs(shown.map(asShown)) },
        { role: 'assistant', content: quotes.join('\n') },
      ],
    };
  });
}
