/**
 * The migration command: copies a SQLite data directory's store into PostgreSQL and verifies it
 * (deploy/sqlite-to-postgres.ts does the work). Run `node dist/deploy/migrate-to-postgres.js --help`.
 *
 * User errors (missing file, unreachable database, a target holding other data, a mismatch)
 * end with one line on stderr and a non-zero exit status, never a stack trace.
 */
import { parseArgs } from 'node:util';
import {
  DEFAULT_BATCH_ROWS,
  describeError,
  migrateSqliteToPostgres,
  MigrationError,
  MigrationStopped,
  type MigrateReport,
} from './sqlite-to-postgres.js';

const NAME = 'migrate-to-postgres';

/** The help text (also the README's usage section). */
export const USAGE = `Usage: node dist/deploy/migrate-to-postgres.js --from <data dir> --to <postgres://...> [options]

Copies quarry's SQLite store (<data dir>/quarry.sqlite: organizations, users, API keys, datasets,
chunks, groups, vectors, change log, events and analytics) into a PostgreSQL database, then
verifies every table: row counts and a sha256 over every row, computed the same way on both sides.

Before: stop every quarry process using the data directory, and create the target database
(CREATE DATABASE quarry ENCODING 'UTF8'); the command creates the tables. It refuses a target
that holds other data. Interrupted? Run the same command again: it resumes where it stopped. Run
on a completed migration, it copies nothing and verifies again.
After: start quarry with QUARRY_DATABASE_URL set to the same URL (keep QUARRY_DATA_DIR: the search
index snapshots in it stay valid).

Options:
  --from <dir>        data directory of the SQLite store (default: $QUARRY_DATA_DIR)
  --to <url>          postgres:// URL of the target database (default: $QUARRY_DATABASE_URL)
  --batch-size <n>    rows per INSERT, one transaction each (default: ${DEFAULT_BATCH_ROWS})
  --json              print the report as JSON on stdout instead of a table
  --debug             print the stack of an unexpected error
  -h, --help          print this help

Progress goes to stderr. Exit status: 0 copied (or nothing left to copy) and verified; 1 an
error or a verification mismatch (one line on stderr says which); 2 bad arguments; 3 stopped
early by QUARRY_MIGRATE_STOP_AFTER_BATCHES=<n> (stops after n batches; for testing resumption).
`;

/** Thrown for bad arguments: exit status 2 with the message and a pointer to --help. */
class UsageError extends Error {}

interface Args {
  readonly from: string;
  readonly to: string;
  readonly batchRows: number;
  readonly json: boolean;
  readonly debug: boolean;
}

function parse(argv: readonly string[]): Args | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        'batch-size': { type: 'string' },
        json: { type: 'boolean', default: false },
        debug: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  const from = values.from ?? process.env.QUARRY_DATA_DIR;
  const to = values.to ?? process.env.QUARRY_DATABASE_URL;
  if (!from) throw new UsageError('name the data directory: --from <dir> (or set QUARRY_DATA_DIR)');
  if (!to) throw new UsageError('name the target database: --to postgres://user:password@host:5432/db (or set QUARRY_DATABASE_URL)');
  if (!/^postgres(ql)?:\/\//.test(to)) throw new UsageError('--to must be a postgres:// URL');
  const batchRows = values['batch-size'] === undefined ? DEFAULT_BATCH_ROWS : Number(values['batch-size']);
  if (!Number.isInteger(batchRows) || batchRows < 1 || batchRows > 100_000) throw new UsageError('--batch-size must be an integer from 1 to 100000');
  return { from, to, batchRows, json: values.json, debug: values.debug };
}

/** A positive integer from the environment, or null when unset. */
function stopAfterBatches(): number | null {
  const raw = process.env.QUARRY_MIGRATE_STOP_AFTER_BATCHES;
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError('QUARRY_MIGRATE_STOP_AFTER_BATCHES must be a positive integer');
  return n;
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/** The report as a table, one line per table, and a closing sentence. */
function render(report: MigrateReport): string {
  const head = ['table', 'source rows', 'target rows', 'copied', 'source sha256', 'target sha256', ''];
  const rows = report.tables.map((t) => [t.table, fmt(t.sourceRows), fmt(t.targetRows), fmt(t.copied), t.sourceSha256.slice(0, 16), t.targetSha256.slice(0, 16), t.ok ? 'ok' : 'MISMATCH']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i >= 1 && i <= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(head), ...rows.map(line), ''];
  if (!report.ok) {
    out.push(`Verification FAILED: ${report.tables.filter((t) => !t.ok).map((t) => t.table).join(', ')} differ between ${report.source} and ${report.target}.`);
  } else if (report.copied > 0) {
    out.push(
      `Copied ${fmt(report.copied)} rows in ${report.seconds.toFixed(1)} s (${fmt(report.rowsPerSecond)} rows/s)${report.resumed ? ', resuming an earlier run' : ''}. ` +
        'Every table verified: counts and checksums match.',
    );
  } else if (report.resumed) {
    out.push(`Nothing to copy: the target already holds every row of ${report.source}. Every table verified: counts and checksums match.`);
  } else {
    out.push(`Nothing to copy: ${report.source} holds no rows.`);
  }
  out.push(`The change log continues at sequence number ${fmt(report.nextChangeSeq)}. Start quarry with QUARRY_DATABASE_URL=${report.target}`);
  return out.join('\n') + '\n';
}

async function main(argv: readonly string[]): Promise<number> {
  let debug = argv.includes('--debug');
  try {
    const args = parse(argv);
    if (args === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    debug = args.debug;
    const report = await migrateSqliteToPostgres({
      dataDir: args.from,
      databaseUrl: args.to,
      batchRows: args.batchRows,
      stopAfterBatches: stopAfterBatches(),
      progress: (line) => process.stderr.write(`${NAME}: ${line}\n`),
    });
    process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
    if (!report.ok) {
      process.stderr.write(`${NAME}: error: verification failed for ${report.tables.filter((t) => !t.ok).map((t) => t.table).join(', ')}\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${NAME}: ${err.message} (see --help)\n`);
      return 2;
    }
    if (err instanceof MigrationStopped) {
      process.stderr.write(`${NAME}: ${err.message}\n`);
      return 3;
    }
    if (err instanceof MigrationError) {
      process.stderr.write(`${NAME}: error: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`${NAME}: unexpected error: ${describeError(err)}${debug ? '' : ' (--debug prints the stack)'}\n`);
    if (debug && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
