/**
 * Resident memory of a bench stack's processes over a run: VmRSS of each named process and of
 * every process under it (found through `/proc/<pid>/task/<tid>/children`), sampled on a timer,
 * with the kernel's own high-water mark (VmHWM) beside it, which also catches a spike between two
 * samples; and the CPU time each process used in the phase (which process is the bottleneck).
 * Linux only (reads /proc).
 */
import fs from 'node:fs';

/** One process's memory over a phase, bytes. */
export interface RssFigures {
  /** Label: the root's name, or `<root>/<comm> <pid>` for a process under it. */
  readonly label: string;
  readonly pid: number;
  /** VmRSS at the first sample of the phase. */
  readonly start: number;
  /** Largest VmRSS sampled in the phase. */
  readonly peak: number;
  /** VmRSS at the last sample of the phase. */
  readonly end: number;
  /** VmHWM at the last sample: the process's peak since it started (not only this phase). */
  readonly hwm: number;
  /** CPU seconds (user + system, all threads) used in the phase. */
  readonly cpuS: number;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux port Node runs on). */
const TICKS_PER_S = 100;

/** User + system CPU seconds in a `/proc/.../stat` line. */
function statCpuSeconds(stat: string): number {
  // The command name (field 2) may hold spaces: count fields from the parenthesis that closes it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/** User + system CPU seconds of a process so far (all its threads), or null when it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    return statCpuSeconds(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Calls `use` with the text of `/proc/<pid>/task/<tid>/<file>` for each thread of `pid` (none when it is gone). */
function perThread(pid: number, file: string, use: (tid: number, text: string) => void): void {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const tid of tids) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/task/${tid}/${file}`, 'utf8');
    } catch {
      // The thread ended between the listing and the read.
      continue;
    }
    use(Number(tid), text);
  }
}

/** CPU seconds (user + system) of each thread of a process so far, by thread id, with the thread's name; empty when it is gone. */
export function threadCpuSeconds(pid: number): Map<number, { name: string; cpuS: number }> {
  const out = new Map<number, { name: string; cpuS: number }>();
  perThread(pid, 'stat', (tid, stat) => out.set(tid, { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuS: statCpuSeconds(stat) }));
  return out;
}

/** A `kB` field of `/proc/<pid>/status` text (VmRSS, RssAnon, ...), in bytes; 0 when absent. */
export function statusBytes(status: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
}

/** Parsed `/proc/<pid>/status` fields, bytes; null when the process is gone. */
function readStatus(pid: number): { rss: number; hwm: number; name: string } | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  return { rss: statusBytes(text, 'VmRSS'), hwm: statusBytes(text, 'VmHWM'), name: /^Name:\s+(.*)$/m.exec(text)?.[1] ?? '?' };
}

/** Child process ids of `pid` (every thread's children: a child's parent is the thread that forked it). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  perThread(pid, 'children', (_tid, text) => {
    for (const c of text.split(' ')) if (c.trim() !== '') out.push(Number(c));
  });
  return out;
}

/** Running figures of one process. */
interface Track {
  label: string;
  pid: number;
  start: number;
  peak: number;
  end: number;
  hwm: number;
  cpuStart: number;
  cpuEnd: number;
}

/** Samples the named processes and their descendants every `intervalMs` until stopped; `phase()` starts a new set of figures. */
export class RssSampler {
  private tracks = new Map<number, Track>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly roots: ReadonlyMap<string, number>,
    intervalMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    // The sampler never keeps a finished bench alive.
    this.timer.unref();
  }

  /** Takes one sample of every process now. */
  sample(): void {
    const seen = new Set<number>();
    const visit = (pid: number, label: string): void => {
      if (seen.has(pid)) return;
      seen.add(pid);
      const s = readStatus(pid);
      if (s === null) return;
      let t = this.tracks.get(pid);
      const cpu = cpuSeconds(pid) ?? 0;
      if (!t) {
        t = { label, pid, start: s.rss, peak: s.rss, end: s.rss, hwm: s.hwm, cpuStart: cpu, cpuEnd: cpu };
        this.tracks.set(pid, t);
      }
      t.peak = Math.max(t.peak, s.rss);
      t.end = s.rss;
      t.hwm = s.hwm;
      t.cpuEnd = Math.max(t.cpuEnd, cpu);
      const root = label.split('/')[0]!;
      for (const c of childrenOf(pid)) visit(c, `${root}/${readStatus(c)?.name ?? '?'} ${c}`);
    };
    for (const [label, pid] of this.roots) visit(pid, label);
  }

  /** Ends the current phase: its figures (in first-seen order), and the next phase starts from the current readings. */
  phase(): RssFigures[] {
    this.sample();
    const figures = [...this.tracks.values()].map((t) => ({ label: t.label, pid: t.pid, start: t.start, peak: t.peak, end: t.end, hwm: t.hwm, cpuS: t.cpuEnd - t.cpuStart }));
    this.tracks = new Map([...this.tracks].map(([pid, t]) => [pid, { ...t, start: t.end, peak: t.end, cpuStart: t.cpuEnd }]));
    return figures;
  }

  /** Current VmRSS of the process labelled `label`, bytes (0 when unknown). */
  current(label: string): number {
    for (const t of this.tracks.values()) if (t.label === label) return t.end;
    return 0;
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.timer);
  }
}
