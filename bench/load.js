// One autocannon run against one server, as its own process so that the
// benchmark can pin the load generator to a CPU core of its own
// (`taskset -c 1 node bench/load.js '<json>'`).
//
// Input (argv[2], JSON): { url, method, headers, body, duration, connections,
// pipelining, timeout, amount, bodiesFile, uuidHeader }. Output (stdout): one
// JSON document with the summary.
//
// Optional, for requests that cannot repeat: `bodiesFile` names a JSON file
// holding an array of bodies, each sent once, in order (with `amount`, the
// run stops when they are used up); `requestsFile` the same for whole
// requests, each `{ headers, body }` (headers added to the common ones: a
// DPoP proof and a client assertion are each accepted once); `uuidHeader`
// names a header that gets a fresh random UUID (version 4) on every request.
//
// Latency percentiles come from autocannon's 'response' events at
// sub-millisecond resolution (autocannon's own histogram counts whole
// milliseconds, too coarse for a 1-3 ms endpoint); its figures are kept too.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2] ?? '{}');
if (!options.url?.startsWith('http://127.0.0.1:')) {
  process.stderr.write('load.js: url must be http://127.0.0.1:<port>/...\n');
  process.exit(2);
}

// Latencies (ms) of 2xx responses, in a growable typed array.
let latencies = new Float64Array(1 << 17);
let count = 0;
const statuses = {};

const bodies = options.bodiesFile ? JSON.parse(readFileSync(options.bodiesFile, 'utf8')) : undefined;
const requests = options.requestsFile ? JSON.parse(readFileSync(options.requestsFile, 'utf8')) : undefined;
let nextBody = 0;
let nextRequest = 0;
const perRequest =
  bodies || requests || options.uuidHeader
    ? {
        requests: [
          {
            setupRequest(request) {
              const changed = { ...request };
              if (bodies) changed.body = bodies[nextBody++ % bodies.length];
              if (requests) {
                const next = requests[nextRequest++ % requests.length];
                changed.headers = { ...request.headers, ...next.headers };
                changed.body = next.body;
              }
              if (options.uuidHeader) changed.headers = { ...changed.headers, [options.uuidHeader]: randomUUID() };
              return changed;
            },
          },
        ],
      }
    : {};

const cpuAtStart = process.cpuUsage();
const startNs = process.hrtime.bigint();
let lastResponseNs = startNs;
const instance = autocannon(
  {
    url: options.url,
    method: options.method ?? 'POST',
    headers: options.headers ?? {},
    body: options.body,
    duration: options.duration ?? 10,
    connections: options.connections ?? 16,
    pipelining: options.pipelining ?? 1,
    timeout: options.timeout ?? 10,
    ...(options.amount ? { amount: options.amount } : {}),
    ...perRequest,
  },
  (error, result) => {
    if (error) {
      process.stderr.write(`load.js: ${error.message}\n`);
      process.exit(1);
    }
    const sorted = latencies.subarray(0, count).sort();
    const at = (q) => (count === 0 ? null : round(sorted[Math.min(count - 1, Math.ceil(q * count) - 1)]));
    const summary = {
      url: options.url,
      duration: result.duration,
      connections: result.connections,
      pipelining: result.pipelining,
      requestsPerSecond: result.requests.average,
      requestsTotal: result.requests.total,
      // Every request from the start to the last response: the figure for short
      // counted runs (`amount`), where autocannon's own duration ends on a timer tick.
      secondsToLastResponse: round(Number(lastResponseNs - startNs) / 1e9),
      requestsPerSecondOverall: lastResponseNs > startNs ? result.requests.total / (Number(lastResponseNs - startNs) / 1e9) : null,
      responses2xx: result['2xx'],
      non2xx: result.non2xx,
      statusCodes: statuses,
      errors: result.errors,
      timeouts: result.timeouts,
      latencyMs: {
        mean: count === 0 ? null : round(sorted.reduce((a, b) => a + b, 0) / count),
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        p999: at(0.999),
        max: count === 0 ? null : round(sorted[count - 1]),
      },
      autocannonLatencyMs: {
        mean: result.latency.mean,
        p50: result.latency.p50,
        p99: result.latency.p99,
        max: result.latency.max,
      },
      throughputBytesPerSecond: result.throughput.average,
      // Near 100, the load generator itself was the limit (over autocannon's duration).
      loadGeneratorCpuPercent: Math.round(cpuPercent(process.cpuUsage(cpuAtStart), result.duration)),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  },
);

instance.on('response', (_client, statusCode, _bytes, responseTime) => {
  statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  lastResponseNs = process.hrtime.bigint();
  if (statusCode < 200 || statusCode > 299) return;
  if (count === latencies.length) {
    const grown = new Float64Array(latencies.length * 2);
    grown.set(latencies);
    latencies = grown;
  }
  latencies[count++] = responseTime;
});

function cpuPercent({ user, system }, seconds) {
  return (user + system) / 1e4 / seconds;
}

function round(ms) {
  return Math.round(ms * 1000) / 1000;
}

// Stop cleanly when the benchmark is interrupted.
process.once('SIGTERM', () => instance.stop());
process.once('SIGINT', () => instance.stop());
