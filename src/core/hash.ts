import { createHash } from 'node:crypto';

/**
 * A short, stable id from content: the first 16 hex digits (64 bits) of SHA-1 over the parts.
 * 64 bits keep the chance of any collision among 21M Wikipedia passages near 1e-5.
 */
export function stableId(prefix: string, ...parts: string[]): string {
  const h = createHash('sha1');
  for (const p of parts) {
    h.update(p);
    h.update('\u0000');
  }
  return prefix + h.digest('hex').slice(0, 16);
}
