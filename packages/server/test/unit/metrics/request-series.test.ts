import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CountsByLabels, HistogramByTwoLabels } from '../../../src/metrics/request-series.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const HISTOGRAM = { name: 'test_duration_seconds', help: 'Time taken', labelNames: ['route', 'method'] as const, buckets: BUCKETS };

/** Observations on every side of every bound, on bounds exactly, and past the last one, over three series. */
const OBSERVATIONS: [string, string, number][] = [];
for (const [route, method] of [['/token', 'POST'], ['/authorize', 'GET'], ['unmatched', 'GET']] as const) {
  for (const bound of BUCKETS) OBSERVATIONS.push([route, method, bound], [route, method, bound * 0.999], [route, method, bound * 1.001]);
  OBSERVATIONS.push([route, method, 0], [route, method, 42]);
}

/** The same calls, through prom-client's own metrics and through ours: the registries' texts. */
async function bothExpositions(calls: (own: { histogram: HistogramByTwoLabels; counts: CountsByLabels }, theirs: { histogram: Histogram<string>; counter: Counter<string> }) => void) {
  const theirRegistry = new Registry();
  const histogram = new Histogram({ ...HISTOGRAM, labelNames: [...HISTOGRAM.labelNames], registers: [theirRegistry] });
  const counter = new Counter({ name: 'test_requests_total', help: 'Requests', labelNames: ['route', 'method', 'status'], registers: [theirRegistry] });
  const ownRegistry = new Registry();
  const ownHistogram = new HistogramByTwoLabels(HISTOGRAM);
  ownRegistry.registerMetric(ownHistogram.asMetric());
  const counts = new CountsByLabels(['route', 'method', 'status']);
  new Counter({
    name: 'test_requests_total',
    help: 'Requests',
    labelNames: ['route', 'method', 'status'],
    registers: [ownRegistry],
    collect() {
      counts.publish(this);
    },
  });
  calls({ histogram: ownHistogram, counts }, { histogram, counter });
  return { theirs: await theirRegistry.metrics(), ours: await ownRegistry.metrics(), ownRegistry, theirRegistry };
}

describe('HistogramByTwoLabels', () => {
  it('is served exactly as prom-client serves its own histogram fed the same values', async () => {
    const { theirs, ours } = await bothExpositions((own, their) => {
      for (const [route, method, value] of OBSERVATIONS) {
        own.histogram.observe(route, method, value);
        their.histogram.observe({ route, method }, value);
      }
    });
    expect(ours).toBe(theirs);
    expect(ours).toContain('test_duration_seconds_bucket{le="0.001",route="/token",method="POST"} 3');
    expect(ours).toContain('test_duration_seconds_bucket{le="+Inf",route="/token",method="POST"} 41');
    expect(ours).toContain('test_duration_seconds_count{route="/authorize",method="GET"} 41');
  });

  it('escapes label values as prom-client does, and counts nothing for a value that is not a number', async () => {
    const { theirs, ours } = await bothExpositions((own, their) => {
      own.histogram.observe('/a"b\\c\nd', 'GET', 0.2);
      their.histogram.observe({ route: '/a"b\\c\nd', method: 'GET' }, 0.2);
      own.histogram.observe('/token', 'POST', Number.NaN);
      own.histogram.observe('/token', 'POST', Number.POSITIVE_INFINITY);
    });
    expect(ours).toBe(theirs);
    expect(ours).not.toContain('/token');
  });

  it('forgets its series when the registry is reset, as prom-client does', async () => {
    const { ownRegistry, theirRegistry } = await bothExpositions((own, their) => {
      own.histogram.observe('/token', 'POST', 0.002);
      their.histogram.observe({ route: '/token', method: 'POST' }, 0.002);
    });
    ownRegistry.resetMetrics();
    theirRegistry.resetMetrics();
    expect(await ownRegistry.metrics()).toBe(await theirRegistry.metrics());
    expect(await ownRegistry.metrics()).not.toContain('route="/token"');
  });
});

describe('CountsByLabels', () => {
  it('hands prom-client exactly the counts made, once, scrape after scrape', async () => {
    const calls: [string, string, number][] = [
      ['/token', 'POST', 200],
      ['/token', 'POST', 200],
      ['/token', 'POST', 401],
      ['unmatched', 'GET', 404],
    ];
    let ownCounts: CountsByLabels | undefined;
    let theirCounter: Counter<string> | undefined;
    const { theirs, ours, ownRegistry, theirRegistry } = await bothExpositions((own, their) => {
      ownCounts = own.counts;
      theirCounter = their.counter;
      for (const [route, method, status] of calls) {
        own.counts.add(route, method, status);
        their.counter.inc({ route, method, status: String(status) });
      }
    });
    expect(ours).toBe(theirs);
    expect(ours).toContain('test_requests_total{route="/token",method="POST",status="200"} 2');
    // A second scrape with nothing new counts nothing twice; then new counts arrive.
    expect(await ownRegistry.metrics()).toBe(theirs);
    ownCounts!.add('/token', 'POST', 200);
    theirCounter!.inc({ route: '/token', method: 'POST', status: '200' });
    ownCounts!.add('/par', 'POST', 201);
    theirCounter!.inc({ route: '/par', method: 'POST', status: '201' });
    expect(await ownRegistry.metrics()).toBe(await theirRegistry.metrics());
    expect(await ownRegistry.metrics()).toContain('test_requests_total{route="/token",method="POST",status="200"} 3');
  });

  it('counts by two labels', async () => {
    const registry = new Registry();
    const counts = new CountsByLabels(['endpoint', 'grant']);
    new Counter({
      name: 'test_tokens_total',
      help: 'Tokens',
      labelNames: ['endpoint', 'grant'],
      registers: [registry],
      collect() {
        counts.publish(this);
      },
    });
    counts.add('/token', 'client_credentials');
    counts.add('/token', 'client_credentials');
    counts.add('/tokens', 'refresh_token');
    const text = await registry.metrics();
    expect(text).toContain('test_tokens_total{endpoint="/token",grant="client_credentials"} 2');
    expect(text).toContain('test_tokens_total{endpoint="/tokens",grant="refresh_token"} 1');
  });
});
