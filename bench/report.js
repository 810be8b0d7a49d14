// What the benchmark scripts print and record: numbers, tables, the machine, the results file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './processes.js';

/** A number with exactly `digits` decimals and thousands separators; `-` when there is none. */
export function fmt(value, digits) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** The middle value (the mean of the two middle ones for an even count); undefined if there is none or any is unknown. */
export function median(values) {
  if (values.length === 0 || values.some((v) => v === undefined)) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * A plain-text table: the first row is the header, then a rule. The first
 * `textColumns` columns are left-aligned, the rest (numbers) right-aligned.
 */
export function textTable(rows, textColumns = 1) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row) => row.map((cell, i) => (i < textColumns ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** A progress printer: `[bench <seconds since startedAt>s] message`. */
export function progressPrinter(startedAt) {
  return (message) => {
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(5);
    process.stdout.write(`[bench ${seconds}s] ${message}\n`);
  };
}

/** The 1, 5 and 15 minute load averages, to two decimals. */
export function loadAverage() {
  return loadavg().map((l) => Math.round(l * 100) / 100);
}

/** The machine a run measured, as recorded with its results. */
export async function machine() {
  const lscpu = await run('lscpu', []).catch(() => '');
  const model = /^Model name:\s*(.+)$/m.exec(lscpu)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  return {
    cpus: cpus().length,
    model,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    node: process.version,
    loadAverage: loadAverage(),
  };
}

/** Writes a run's raw results to `bench/results/<name>-<start time>.json` (ignored by git); returns the path. */
export function writeResults(name, startedAt, report) {
  const dir = fileURLToPath(new URL('results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${new Date(startedAt).toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
