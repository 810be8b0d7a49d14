import type { Counter, Metric } from 'prom-client';

/**
 * The per-request metrics, counted in memory and handed to prom-client's
 * registry only when `/metrics` is scraped (docs/operator-guide.md,
 * "Metrics").
 *
 * Every answered request adds to a counter and to the latency histogram,
 * and every token request to the tokens counter. prom-client's `inc` and
 * `observe` check and hash their labels on every call: for a token request
 * that was about 24,000 instructions, 3.6% of all it runs, more than any
 * other part of it but signing (bench/README.md). Here the label values
 * find their series through a map per label, and the series is a few
 * numbers; a scrape (every 15 seconds or so, against thousands of requests
 * a second) does the rest. What a scrape shows is exactly what prom-client
 * would have shown for the same calls.
 */

/** The map `outer` holds under `key`, made empty the first time. */
function innerMap<K, IK, V>(outer: Map<K, Map<IK, V>>, key: K): Map<IK, V> {
  let inner = outer.get(key);
  if (inner === undefined) {
    inner = new Map();
    outer.set(key, inner);
  }
  return inner;
}

/** One series of a counter: its labels, what was counted, and how much of it prom-client has. */
interface Tally {
  readonly labels: Record<string, string>;
  count: number;
  published: number;
}

/**
 * Counts by two or three label values (the third one may be a number,
 * such as a status code), added to a prom-client counter at each scrape by
 * {@link publish}, from the counter's own `collect`.
 */
export class CountsByLabels {
  readonly #names: readonly string[];
  readonly #tallies = new Map<string, Map<string, Map<string | number, Tally>>>();

  /** @param labelNames the counter's label names, in the order `add` takes their values. */
  constructor(labelNames: readonly [string, string] | readonly [string, string, string]) {
    this.#names = labelNames;
  }

  /** Counts one, under these label values (`third` only when there are three labels). */
  add(first: string, second: string, third: string | number = ''): void {
    const byThird = innerMap(innerMap(this.#tallies, first), second);
    const tally = byThird.get(third);
    if (tally === undefined) byThird.set(third, { labels: this.#labels(first, second, third), count: 1, published: 0 });
    else tally.count += 1;
  }

  /** Adds to `counter` what was counted since the last call. */
  publish(counter: Counter<string>): void {
    for (const bySecond of this.#tallies.values()) {
      for (const byThird of bySecond.values()) {
        for (const tally of byThird.values()) {
          if (tally.count === tally.published) continue;
          counter.inc(tally.labels, tally.count - tally.published);
          tally.published = tally.count;
        }
      }
    }
  }

  #labels(first: string, second: string, third: string | number): Record<string, string> {
    const [a = '', b = '', c] = this.#names;
    const labels: Record<string, string> = { [a]: first, [b]: second };
    if (c !== undefined) labels[c] = String(third);
    return labels;
  }
}

/** One series of the histogram. */
interface Series {
  readonly labels: Record<string, string>;
  /** Observations per bucket: `buckets[i]` those at most `bounds[i]` and above the bound before; the last, those above every bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/** What the registry reads of a metric: one value of a sample. */
interface SampleValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName: string;
}

/**
 * A histogram by two labels, registered in a prom-client registry as a
 * metric of its own: the registry formats and serves it like prom-client's
 * own `Histogram` with the same name, help, label names and buckets, sample
 * for sample (`test/unit/metrics/request-series.test.ts`).
 */
export class HistogramByTwoLabels {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly #labelNames: readonly [string, string];
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, Map<string, Series>>();

  constructor(options: { name: string; help: string; labelNames: readonly [string, string]; buckets: readonly number[] }) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
  }

  /** Observes one value under these two label values; one that is not a finite number is not counted. */
  observe(first: string, second: string, value: number): void {
    if (!Number.isFinite(value)) return;
    const bySecond = innerMap(this.#series, first);
    let series = bySecond.get(second);
    if (series === undefined) {
      const [a, b] = this.#labelNames;
      series = { labels: { [a]: first, [b]: second }, buckets: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      bySecond.set(second, series);
    }
    const bounds = this.#bounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket += 1;
    series.buckets[bucket]! += 1;
    series.sum += value;
    series.count += 1;
  }

  /** The samples, as prom-client's registry reads a metric's. */
  get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: SampleValue[] }> {
    const values: SampleValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const bySecond of this.#series.values()) {
      for (const series of bySecond.values()) {
        let cumulative = 0;
        this.#bounds.forEach((bound, i) => {
          cumulative += series.buckets[i]!;
          values.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: bucketName });
        });
        values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName });
        values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` });
        values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` });
      }
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** Forgets every series (prom-client's `registry.resetMetrics()`). */
  reset(): void {
    this.#series.clear();
  }

  /** As the registry takes a metric: it reads `name`, `get()` and `reset()`. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}
