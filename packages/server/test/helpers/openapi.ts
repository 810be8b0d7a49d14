import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import diagnostics from 'node:diagnostics_channel';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, RouteOptions } from 'fastify';
import { expect } from 'vitest';

/**
 * Checks real responses against Connect's OpenAPI description, with Ajv's
 * JSON Schema 2020-12 validator over the description's own schemas: the
 * method, path and status are described, the content type is one the
 * response describes, the JSON body validates, and every required header
 * is there (and every described header that is there matches its schema).
 *
 * @example
 * const openapi = openApiChecker(openApiDocument());
 * openapi.expectConforms(await app.inject({ method: 'GET', url: '/healthz' }));
 */

/** Where the description sits in Ajv: the base of every schema's pointer. */
const DOCUMENT_ID = 'https://openapi.connect.invalid/openapi.json';

/** The keywords of an OpenAPI document's root, which Ajv is to take as annotations. */
const ROOT_KEYWORDS = ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags', 'externalDocs'];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Json = { readonly [key: string]: unknown };

/** One response the description has: `POST /token 400`. */
export type DescribedResponse = `${Uppercase<(typeof METHODS)[number]>} ${string} ${string}`;

export interface OpenApiChecker {
  /** What is wrong with `res` by the description; empty when it conforms. Records it as seen when described. */
  problems(res: LightMyRequestResponse): string[];
  /** Fails the test unless `res` conforms; returns it. */
  expectConforms(res: LightMyRequestResponse): LightMyRequestResponse;
  /** `app` whose `inject()` checks every response it returns with {@link expectConforms}. */
  checked(app: FastifyInstance): FastifyInstance;
  /** Every method, path and status the description has. */
  described(): DescribedResponse[];
  /** The described responses checked so far. */
  readonly seen: ReadonlySet<DescribedResponse>;
  /** The pointer of every schema in the description (components, parameters, bodies, responses, headers). */
  schemaPointers(): string[];
  /** Compiles the schema at `pointer` (strict: an unknown keyword or format throws). */
  compile(pointer: string): ValidateFunction;
}

/** A JSON pointer (RFC 6901) of `parts`. */
export function pointerOf(...parts: readonly string[]): string {
  return parts.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** The value of `pointer` in `document`. */
function at(document: Json, pointer: string): unknown {
  let node: unknown = document;
  for (const part of pointer.split('/').slice(1)) {
    node = (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** Follows a local `$ref`: the object and where it is. */
function resolve(document: Json, node: unknown, pointer: string): { node: Json; pointer: string } {
  const ref = (node as Json | undefined)?.$ref;
  if (typeof ref === 'string') {
    if (!ref.startsWith('#/')) throw new Error(`only local references are followed, not ${ref}`);
    return resolve(document, at(document, ref.slice(1)), ref.slice(1));
  }
  return { node: (node ?? {}) as Json, pointer };
}

/** The described path that `pathname` is: an exact one, else a template whose `{parameters}` match one segment each. */
function matchPath(paths: readonly string[], pathname: string): string | undefined {
  if (paths.includes(pathname)) return pathname;
  return paths.find((path) => {
    if (!path.includes('{')) return false;
    const pattern = path.split(/\{[^}]+\}/).map((piece) => piece.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
    return new RegExp(`^${pattern}$`).test(pathname);
  });
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
}

export function openApiChecker(document: Json): OpenApiChecker {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  formats.default(ajv);
  ajv.addVocabulary(ROOT_KEYWORDS);
  ajv.addSchema(document, DOCUMENT_ID);

  const compiled = new Map<string, ValidateFunction>();
  const compile = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (!validate) {
      // The fragment is a URI fragment: each part percent-encoded (`{issuerPath}`).
      const fragment = pointer.split('/').map(encodeURIComponent).join('/');
      validate = ajv.getSchema(`${DOCUMENT_ID}#${fragment}`);
      if (!validate) throw new Error(`no schema at ${pointer}`);
      compiled.set(pointer, validate);
    }
    return validate;
  };

  const paths = (document.paths ?? {}) as Record<string, Json>;
  const seen = new Set<DescribedResponse>();

  function problems(res: LightMyRequestResponse): string[] {
    const method = String(res.raw.req.method).toLowerCase();
    const pathname = new URL(String(res.raw.req.url), 'http://connect.invalid').pathname;
    const status = String(res.statusCode);
    const path = matchPath(Object.keys(paths), pathname);
    if (path === undefined) return [`${method.toUpperCase()} ${pathname}: no such path is described`];
    const operation = paths[path]?.[method] as Json | undefined;
    if (!operation) return [`${method.toUpperCase()} ${path}: the method is not described`];
    const responses = (operation.responses ?? {}) as Json;
    const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : undefined;
    const where = `${method.toUpperCase()} ${path} ${status}`;
    if (key === undefined) return [`${where}: the status is not described (body: ${res.body.slice(0, 200)})`];
    seen.add(`${method.toUpperCase()} ${path} ${key}` as DescribedResponse);

    const found: string[] = [];
    const described = resolve(document, responses[key], pointerOf('paths', path, method, 'responses', key));

    // The body: of a described media type, and valid JSON of its schema.
    const content = described.node.content as Record<string, Json> | undefined;
    const contentType = res.headers['content-type'];
    if (!content) {
      if (res.body !== '') found.push(`${where}: a body where none is described`);
    } else {
      const mediaType = String(contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!(mediaType in content)) {
        found.push(`${where}: Content-Type ${String(contentType)} is not one of ${Object.keys(content).join(', ')}`);
      } else if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
        let body: unknown;
        try {
          body = JSON.parse(res.body);
        } catch {
          found.push(`${where}: the body is not JSON`);
        }
        if (body !== undefined) {
          const validate = compile(`${described.pointer}${pointerOf('content', mediaType, 'schema')}`);
          if (!validate(body)) found.push(`${where}: the body does not match its schema: ${describeErrors(validate.errors)}`);
        }
      }
    }

    // The headers: each required one there, each one there as its schema says.
    const headers = (described.node.headers ?? {}) as Record<string, unknown>;
    for (const [name, value] of Object.entries(headers)) {
      const headerObject = resolve(document, value, `${described.pointer}${pointerOf('headers', name)}`);
      const sent = res.headers[name.toLowerCase()];
      if (sent === undefined) {
        if (headerObject.node.required === true) found.push(`${where}: the required header ${name} is missing`);
        continue;
      }
      const validate = compile(`${headerObject.pointer}/schema`);
      for (const one of Array.isArray(sent) ? sent : [String(sent)]) {
        if (!validate(one)) found.push(`${where}: header ${name}: ${JSON.stringify(one)} does not match its schema: ${describeErrors(validate.errors)}`);
      }
    }
    return found;
  }

  function expectConforms(res: LightMyRequestResponse): LightMyRequestResponse {
    expect(problems(res), `${res.raw.req.method} ${res.raw.req.url} → ${res.statusCode}`).toEqual([]);
    return res;
  }

  return {
    problems,
    expectConforms,
    checked(app) {
      const inject = (options: InjectOptions | string) => app.inject(options).then(expectConforms);
      return new Proxy(app, { get: (target, name) => (name === 'inject' ? inject : Reflect.get(target, name, target)) });
    },
    described() {
      return Object.entries(paths).flatMap(([path, item]) =>
        METHODS.filter((method) => item[method] !== undefined).flatMap((method) =>
          Object.keys(((item[method] as Json).responses ?? {}) as Json).map((status) => `${method.toUpperCase()} ${path} ${status}` as DescribedResponse),
        ),
      );
    },
    seen,
    schemaPointers() {
      const pointers: string[] = [];
      const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
      for (const name of Object.keys(schemas)) pointers.push(pointerOf('components', 'schemas', name));
      for (const name of Object.keys(((document.components as Json | undefined)?.headers ?? {}) as Json)) {
        pointers.push(pointerOf('components', 'headers', name, 'schema'));
      }
      for (const name of Object.keys(((document.components as Json | undefined)?.parameters ?? {}) as Json)) {
        pointers.push(pointerOf('components', 'parameters', name, 'schema'));
      }
      // Every inline schema under a response, a request body or a parameter.
      const responses = ((document.components as Json | undefined)?.responses ?? {}) as Json;
      const walk = (node: unknown, pointer: string): void => {
        if (node === null || typeof node !== 'object') return;
        if ('$ref' in node) return;
        for (const [name, value] of Object.entries(node)) {
          const next = `${pointer}${pointerOf(name)}`;
          if (name === 'schema') pointers.push(next);
          else walk(value, next);
        }
      };
      walk(paths, pointerOf('paths'));
      walk(responses, pointerOf('components', 'responses'));
      return pointers;
    },
    compile,
  };
}

/** A route as Fastify registered it. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

/**
 * Runs `make` (which builds an app) and returns the routes every Fastify
 * instance created meanwhile registered, as its `onRoute` hook saw them
 * (through Fastify's `fastify.initialization` diagnostics channel, which
 * hands over each new instance before anything is registered on it).
 */
export async function collectRoutes<T>(make: () => Promise<T>): Promise<{ made: T; routes: RegisteredRoute[] }> {
  const routes: RegisteredRoute[] = [];
  const onInstance = (message: unknown) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    });
  };
  diagnostics.subscribe('fastify.initialization', onInstance);
  try {
    const made = await make();
    return { made, routes };
  } finally {
    diagnostics.unsubscribe('fastify.initialization', onInstance);
  }
}

/** `GET /a/{x}` for both a described path and a Fastify route (`/a/*`, `/a/:x`): parameters as `{}`. */
export function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\{[^}]+\}|:[^/]+|\*/g, '{}')}`;
}
