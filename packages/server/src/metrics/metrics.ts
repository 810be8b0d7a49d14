import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { CountsByLabels, HistogramByTwoLabels } from './request-series.js';

/** How full the database pool is, when the engine has one (PostgreSQL). */
export interface PoolStats {
  /** Connections open. */
  readonly total: number;
  /** Open and not in use. */
  readonly idle: number;
  /** Requests waiting for a connection. */
  readonly waiting: number;
}

/**
 * The Prometheus metrics of one Connect instance (docs/operator-guide.md,
 * "Metrics"), in a registry of its own. Labels only ever hold bounded
 * values — route patterns, methods, status codes, grant types, outcome
 * codes — never a URL as requested, a secret, a token or a mobile number.
 */
export interface Metrics {
  readonly registry: Registry;
  /** One finished HTTP request: its route pattern (`unmatched` for none), method, status and seconds taken. */
  request(route: string, method: string, status: number, seconds: number): void;
  /** A token issued at `endpoint` (`/token`, `/tokens`) by `grant`. */
  tokenIssued(endpoint: string, grant: string): void;
  /** One step of the hosted login (`login`, `register`, `otp`, `consent`) and what came of it. */
  journeyStep(step: string, outcome: string): void;
  /** A sign-in completed on the hosted pages, by method (`pin_sms`, `passkey`). */
  signIn(method: string): void;
  /** An audit event recorded (SMS gateway failures, PIN lockouts, code replays, …): its type and outcome. */
  auditEvent(type: string, outcome: string): void;
}

/** The latency buckets of HTTP requests, seconds: from a cached token check to a slow PIN hash. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Creates the metrics: the process's own (CPU, memory, event-loop lag, GC:
 * prom-client's defaults, prefixed `connect_`), requests, tokens, login
 * steps, audit events, the database pool when `poolStats` is given, and
 * the release (`connect_build_info`) when `release` is given.
 */
export function createMetrics(options: { poolStats?: () => PoolStats | undefined; release?: { version: string; commit: string } } = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'connect_', eventLoopMonitoringPrecision: 20 });
  if (options.release) {
    // Always 1: the labels say which release answers (docs/upgrades.md, "Releases").
    new Gauge({
      name: 'connect_build_info',
      help: 'The release of Connect this instance runs: version, commit and Node.js version, as labels',
      labelNames: ['version', 'commit', 'node'],
      registers: [registry],
    }).set({ version: options.release.version, commit: options.release.commit, node: process.version }, 1);
  }
  // Counted per request in memory, handed to the registry at each scrape (request-series.ts).
  const requestCounts = new CountsByLabels(['route', 'method', 'status']);
  new Counter({
    name: 'connect_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    collect() {
      requestCounts.publish(this);
    },
  });
  const latency = new HistogramByTwoLabels({
    name: 'connect_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and method',
    labelNames: ['route', 'method'],
    buckets: LATENCY_BUCKETS,
  });
  registry.registerMetric(latency.asMetric());
  const tokenCounts = new CountsByLabels(['endpoint', 'grant']);
  new Counter({
    name: 'connect_tokens_issued_total',
    help: 'Tokens issued, by endpoint and grant',
    labelNames: ['endpoint', 'grant'],
    registers: [registry],
    collect() {
      tokenCounts.publish(this);
    },
  });
  const steps = new Counter({
    name: 'connect_login_steps_total',
    help: 'Steps of the hosted login (login, register, otp, consent) by outcome',
    labelNames: ['step', 'outcome'],
    registers: [registry],
  });
  const signIns = new Counter({
    name: 'connect_sign_ins_total',
    help: 'Sign-ins completed on the hosted pages, by method (pin_sms, passkey)',
    labelNames: ['method'],
    registers: [registry],
  });
  const audits = new Counter({
    name: 'connect_audit_events_total',
    help: 'Audit events recorded, by type and outcome (e.g. sms.send_failed, customer.pin_lockout)',
    labelNames: ['type', 'outcome'],
    registers: [registry],
  });
  if (options.poolStats) {
    const poolStats = options.poolStats;
    new Gauge({
      name: 'connect_db_pool_connections',
      help: 'Database pool connections, by state (in_use, idle, waiting: requests waiting for one)',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const stats = poolStats();
        if (!stats) return;
        this.set({ state: 'in_use' }, stats.total - stats.idle);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }
  return {
    registry,
    request(route, method, status, seconds) {
      requestCounts.add(route, method, status);
      latency.observe(route, method, seconds);
    },
    tokenIssued: (endpoint, grant) => tokenCounts.add(endpoint, grant),
    journeyStep: (step, outcome) => steps.inc({ step, outcome }),
    signIn: (method) => signIns.inc({ method }),
    auditEvent: (type, outcome) => audits.inc({ type, outcome }),
  };
}
