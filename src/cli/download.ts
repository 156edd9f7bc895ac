import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { DEFAULT_ENDPOINT, download, DOWNLOAD_NAMES, DOWNLOADS, type DownloadSet, FLASHRAG_REPO, formatBytes, type FileResult } from '../corpus/download.js';
import { durationArg, intArg } from './options.js';
import { formatTable } from './table.js';

interface DownloadOpts {
  out?: string;
  split?: string;
  revision?: string;
  endpoint?: string;
  unpack: boolean;
  force: boolean;
  retries: number;
  timeout: number;
  quiet: boolean;
  list: boolean;
}

function check(f: FileResult): string {
  if (f.checkedBy === 'sha256' && f.sha256) return `sha256 ${f.sha256.slice(0, 12)}…`;
  if (f.checkedBy === 'git-sha1' && f.gitSha1) return `git-sha1 ${f.gitSha1.slice(0, 12)}…`;
  return f.checkedBy ?? 'unknown';
}

/** Every set's files with split and size, then one line per set: what it is for and where it comes from (or how to build it). */
function listing(): string {
  const rows: string[][] = [];
  const notes: string[] = [];
  const sets: DownloadSet[] = Object.values(DOWNLOADS);
  for (const set of sets) {
    const split = (s: string) => `${s}${set.defaults.includes(s) ? '*' : ''}`;
    for (const f of set.files) rows.push([set.name, split(f.split), f.path, f.bytes !== undefined ? formatBytes(f.bytes) : `~${f.approx ?? '?'}`]);
    const l = set.listing;
    if (l) rows.push([set.name, split(l.split), `${l.into}/${l.folder}/*${l.ext} (${l.count} files)${l.joinTo ? ` → ${l.joinTo}` : ''}`, `~${l.approx}`]);
    if (set.build) rows.push([set.name, split(set.defaults[0] ?? 'corpus'), '(built, not downloaded: see below)', '–']);
    const from = `${set.repo ?? FLASHRAG_REPO}${set.revision ? `@${set.revision.slice(0, 7)}` : ''}`;
    notes.push(set.build ? `${set.name}: ${set.what}; ${set.build.why}; build it: ${set.build.how}` : `${set.name}: ${set.what} [${from}]`);
  }
  return [
    formatTable(['name', 'split', 'file', 'size'], rows),
    "* fetched when --split is not given; ~ sizes from the Hub's listing, exact ones pinned with their sha256; files land under --out at the paths shown",
    '',
    ...notes,
  ].join('\n');
}

export function registerDownload(program: Command): void {
  program
    .command('download')
    .description(`fetch benchmark datasets and corpora from the Hugging Face Hub: FlashRAG's repository (${FLASHRAG_REPO}: the QA sets, wiki18), MedQA and MedRAG's textbooks; resumable, checksummed`)
    .argument('[names...]', DOWNLOAD_NAMES.join(', '))
    .option('--out <dir>', 'folder for the files, at the paths --list shows (DIR/hotpotqa/dev.jsonl, DIR/medqa/phrases_no_exclude_test.jsonl)')
    .option('--split <splits>', 'comma-separated splits (dev, test, train, corpus) or all (default: the evaluation split; see --list)')
    .option('--revision <rev>', "branch, tag or commit of the set's repository (default: the commit the set is pinned to, else main)")
    .option('--endpoint <url>', `Hub or mirror URL (default: $HF_ENDPOINT, else ${DEFAULT_ENDPOINT}); $HF_TOKEN is sent to it if set`)
    .option('--no-unpack', 'keep wiki18_100w.zip as downloaded (default: unpack wiki18_100w.jsonl beside it)')
    .option('--force', 'fetch again files that are already there', false)
    .option('--retries <n>', 'attempts after a broken transfer or a 429/5xx reply, each resuming where the last stopped', intArg(0, 1000), 5)
    .option('--timeout <duration>', 'give up on a connection silent this long (e.g. 30s, 2m)', durationArg, 60_000)
    .option('--quiet', 'no progress lines', false)
    .option('--list', 'list what can be downloaded, with sizes', false)
    .action(async (names: string[], opts: DownloadOpts) => {
      if (opts.list) {
        console.log(listing());
        return;
      }
      if (names.length === 0) throw new InputError('name what to download', `one or more of ${DOWNLOAD_NAMES.join(', ')} (ragtrail download --list shows the files)`);
      for (const name of names) if (!DOWNLOAD_NAMES.includes(name as never)) throw new InputError(`unknown download "${name}"`, `choose from ${DOWNLOAD_NAMES.join(', ')}`);
      // A set that is built, not downloaded, is refused before anything is fetched, with how to build it.
      for (const name of names) {
        const build = (DOWNLOADS[name as keyof typeof DOWNLOADS] as DownloadSet).build;
        if (build) throw new InputError(`${name} is ${build.why}`, `build it: ${build.how}`);
      }
      if (!opts.out) throw new InputError('--out DIR is required', 'the folder the files go to, e.g. --out data');
      const splits = opts.split?.split(',').map((s) => s.trim()).filter(Boolean);
      const rows: (string | number)[][] = [];
      const next: string[] = [];
      const more: string[] = [];
      for (const name of names) {
        const r = await download(name, { out: opts.out, splits, revision: opts.revision, endpoint: opts.endpoint, unpack: opts.unpack, force: opts.force, retries: opts.retries, timeoutMs: opts.timeout, quiet: opts.quiet });
        for (const f of r.files) {
          const how = f.resumedFrom > 0 ? `resumed at ${formatBytes(f.resumedFrom)}` : 'downloaded';
          rows.push([f.path, f.bytes, check(f), f.status === 'present' ? 'already there' : f.attempts > 1 ? `${how} (${f.attempts} attempts)` : how]);
          for (const u of f.unpacked ?? []) rows.push([`  → ${u.file}`, u.bytes, 'zip CRC-32', u.extracted ? 'unpacked' : 'already there']);
        }
        if (r.joined) rows.push([`  → ${r.joined.file}`, r.joined.bytes, `${r.joined.parts} file${r.joined.parts === 1 ? '' : 's'} joined`, r.joined.written ? 'joined' : 'already there']);
        next.push(...r.next);
        if (r.skippedSplits.length > 0) more.push(`${name}: ${r.skippedSplits.map((s) => s.split).join(', ')}`);
      }
      console.log(formatTable(['file', 'bytes', 'checked', 'status'], rows));
      for (const line of next) console.log(`next: ${line}`);
      if (more.length > 0 && !splits) console.log(`also available (--split NAME or all): ${more.join('; ')}`);
    });
}
