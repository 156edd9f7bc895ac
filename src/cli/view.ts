import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { listen, stopOnSignals } from '../core/http-server.js';
import { writeBundle } from '../view/bundle.js';
import { ViewData } from '../view/data.js';
import { viewServer } from '../view/server.js';
import { findSources } from '../view/sources.js';
import { intArg } from './options.js';

export function registerView(program: Command): void {
  program
    .command('view')
    .description('browse ragtrail outputs in a web app: runs, each question\'s transcript and rewards, MCTS trees with their mined pairs, results with CIs and claims, training curves, two systems side by side (read-only, on 127.0.0.1)')
    .argument('[dirs...]', 'folders of ragtrail output (run, annotate, eval, pipeline, demo, llm-loop), searched recursively', ['.'])
    .option('--port <n>', 'port (0 picks a free one)', intArg(0, 65535), 7501)
    .option('--host <host>', 'address to listen on (another than the loopback interface shares your outputs with the network)', '127.0.0.1')
    .option('--bundle <out>', 'write the app and its data as static files to this folder instead of serving (open out/index.html)')
    .action(async (dirs: string[], opts: { port: number; host: string; bundle?: string }) => {
      const sources = findSources(dirs);
      if (sources.length === 0) throw new InputError(`no ragtrail output under ${dirs.join(', ')}`, 'pass a folder written by run, annotate, eval, pipeline or demo');
      const data = new ViewData(sources);
      const counts = ([['run', 'run', 'runs'], ['annotation', 'annotation', 'annotations'], ['results', 'results file', 'results files'], ['training', 'training log', 'training logs']] as const).map(([k, one, many]) => { const n = sources.filter((s) => s.kind === k).length; return `${n} ${n === 1 ? one : many}`; }).join(', ');
      if (opts.bundle) {
        const { files, bytes } = await writeBundle(data, opts.bundle);
        console.log(`bundled ${counts} → ${opts.bundle}/index.html (${files} files, ${(bytes / 2 ** 20).toFixed(1)} MiB)`);
        return;
      }
      const server = viewServer(data, opts.host);
      const port = await listen(server, opts.port, opts.host);
      const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
      console.log(`viewing ${counts} at http://${shown}:${port}/ (Ctrl-C to stop)`);
      stopOnSignals(server, { log: (m) => console.error(m) });
    });
}
