/** `profpack flame FILES…|DIR -o flame.html`: a self-contained flame graph and timeline page. */
import { type Command } from 'commander';
import { formatLabels } from '../../formats/index';
import { flame, heapFlame } from '../../view/index';
import { heapMoment, isHeapOnly } from '../heap-input';
import { SourceMapper } from '../../sourcemap/index';
import { action } from '../errors';

interface FlameFlags {
  output: string;
  title?: string;
  sourceMaps?: string;
  sampleType?: string;
  heap?: boolean;
  at?: string;
}

export function registerFlame(program: Command): Command {
  return program
    .command('flame')
    .description(
      'write one self-contained HTML page (no network): flame graph, timeline per thread, search, zoom, function table',
    )
    .argument('<files...>', `profiles (${formatLabels()}) or directories of them; ` + 'many are aggregated together')
    .option('-o, --output <file>', 'the HTML file to write', 'flame.html')
    .option('--title <text>', 'page title')
    .option(
      '--source-maps <dir>',
      'show frames of compiled scripts at their source (the scripts and their maps are under DIR)',
    )
    .option(
      '--sample-type <name>',
      "the value shown (type or type/unit, e.g. inuse_space; default: the profile's default type)",
    )
    .option(
      '--heap',
      'a heap recording: live bytes (at the end, or --at), over a timeline of the live bytes (estimated); ' +
        'a dragged window shows the allocations made in it still live at its end',
    )
    .option(
      '--at <moment>',
      'heap: the moment the page opens on (peak | end | MS after the start; default end); implies --heap',
    )
    .action(
      action((files: string[], flags: FlameFlags) => {
        const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
        // A heap-only recording (record --no-cpu) has no CPU samples to draw: its heap is drawn.
        const heap =
          flags.heap === true || flags.at !== undefined || (flags.sampleType === undefined && isHeapOnly(files));
        const s = heap
          ? heapFlame(files, flags.output, { title: flags.title, mapFrame: maps?.mapFrame, at: heapMoment(flags.at) })
          : flame(files, flags.output, { title: flags.title, mapFrame: maps?.mapFrame, sampleType: flags.sampleType });
        for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
        process.stdout.write(
          `${s.output}: ${s.samples} samples, ${s.threads} thread(s), ${s.nodes} stack nodes, ` +
            `${s.buckets} time buckets, ${s.bytes} bytes\n`,
        );
      }),
    );
}
