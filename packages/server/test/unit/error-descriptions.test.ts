import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Fastify from 'fastify';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { conformantDescription, ERROR_DESCRIPTION_PATTERN, InsufficientScope, InvalidClient, InvalidRequest, InvalidToken, parameterLabel } from '../../src/core/errors.js';
import { registerErrorHandling } from '../../src/http/plugins/oauth-errors.js';

/**
 * Every `error_description` Connect sends uses only the characters RFC 6749
 * §5.2 allows and never repeats what the request sent: the one error
 * mapping guards the wire, and every description written in the source is
 * checked here, so that the guard never has to change one.
 */

const SRC = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The OAuth error classes of the catalogue (each takes its description first). */
const ERROR_CLASSES = new Set(
  [...readFileSync(join(SRC, 'core/errors.ts'), 'utf8').matchAll(/export class (\w+) extends OAuthError/g)].map((m) => m[1] as string),
);

/** Functions that take a redirect's error description, by the position of that argument. */
const DESCRIPTION_ARGUMENTS: Readonly<Record<string, number>> = { fail: 1, buildErrorRedirect: 2, assertionFailed: 0 };

/**
 * Values a description may interpolate, by file: each is one of a few
 * words of Connect's own, never the request's.
 */
const ALLOWED_INTERPOLATIONS: Readonly<Record<string, readonly string[]>> = {
  // The names of the environments (the request's credentials only pick one).
  // And the one client_assertion_type Connect supports.
  'core/clients/client-authenticate.ts': ['foreign', 'deps.environment', 'JWT_BEARER_ASSERTION_TYPE'],
  // The grant types this server serves, and the registry's name of the one refused.
  'core/grants/token-request.ts': ["[...deps.grants.keys()].join(', ')", 'grant.grantType'],
  // The names of the readiness checks that failed (database, redis).
  'http/routes/health.ts': ["failed.join(', ')"],
  // The name of a header Connect reads, or a parameter's label (parameterLabel).
  'http/plugins/control-characters.ts': ['problem'],
};

/**
 * Descriptions passed on from elsewhere, by file: each is checked where it
 * is written (a `fail` call, the `description` of a table entry).
 */
const PASSED_ON: Readonly<Record<string, readonly string[]>> = {
  // The description of an InvalidScope from core/scopes.ts, sent back to the redirect URI.
  'core/authorize/authorization-request.ts': ['error.description'],
  'core/journey/start.ts': ['description', 'check.description'],
  // The descriptions of /authorize's own check (its `fail` calls), answered as JSON at /par.
  'core/authorize/pushed-request.ts': ['description'],
  // The helpers that make a private_key_jwt failure (each call checked as assertionFailed).
  'core/clients/client-assertion.ts': ['description'],
  'core/clients/client-authenticate.ts': ['description'],
  'http/plugins/oauth-errors.ts': ['known.description'],
};

/**
 * Folders whose `description` fields document rather than answer: the
 * OpenAPI description's, written for people reading it (they quote JSON
 * and cite RFC sections), never sent as an `error_description`.
 */
const DOCUMENTATION: readonly string[] = ['http/openapi/'];

/** Module-level `const NAME = '…'` of every source file, by name. */
function stringConstants(files: readonly ts.SourceFile[]): Map<string, string> {
  const constants = new Map<string, string>();
  for (const file of files) {
    for (const statement of file.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.initializer && ts.isStringLiteralLike(declaration.initializer)) {
          constants.set(declaration.name.text, declaration.initializer.text);
        }
      }
    }
  }
  return constants;
}

interface Finding {
  readonly where: string;
  readonly problem: string;
}

/** Every description written in `sources` (path under `src/`, text) that breaks the rules, with where it is. */
function findProblems(sources: ReadonlyArray<readonly [string, string]>): { checked: number; problems: Finding[] } {
  const files = sources.map(([path, text]) => ts.createSourceFile(join(SRC, path), text, ts.ScriptTarget.Latest, true));
  const constants = stringConstants(files);
  const problems: Finding[] = [];
  let checked = 0;

  for (const file of files) {
    const name = relative(SRC, file.fileName);
    const where = (node: ts.Node) => `${name}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const text = (value: string, node: ts.Node) => {
      if (!ERROR_DESCRIPTION_PATTERN.test(value)) problems.push({ where: where(node), problem: `characters RFC 6749 does not allow: ${value}` });
    };
    const checkDescription = (expr: ts.Expression) => {
      checked++;
      if (ts.isParenthesizedExpression(expr)) return checkDescription(expr.expression);
      if (ts.isConditionalExpression(expr)) {
        checkDescription(expr.whenTrue);
        return checkDescription(expr.whenFalse);
      }
      if (ts.isStringLiteralLike(expr)) return text(expr.text, expr);
      if (ts.isTemplateExpression(expr)) {
        text(expr.head.text, expr);
        for (const span of expr.templateSpans) {
          text(span.literal.text, span);
          const inner = span.expression;
          const labelled = ts.isCallExpression(inner) && ts.isIdentifier(inner.expression) && inner.expression.text === 'parameterLabel';
          if (!labelled && !(ALLOWED_INTERPOLATIONS[name] ?? []).includes(inner.getText(file))) {
            problems.push({ where: where(inner), problem: `interpolates ${inner.getText(file)}, which may repeat the request` });
          }
        }
        return;
      }
      if (ts.isIdentifier(expr) && constants.has(expr.text)) return text(constants.get(expr.text) as string, expr);
      if ((PASSED_ON[name] ?? []).includes(expr.getText(file))) return;
      problems.push({ where: where(expr), problem: `a description this check cannot read: ${expr.getText(file)}` });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && ERROR_CLASSES.has(node.expression.text) && node.arguments?.[0]) {
        checkDescription(node.arguments[0]);
      } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
        const index = DESCRIPTION_ARGUMENTS[node.expression.text];
        const argument = index === undefined ? undefined : node.arguments[index];
        if (argument) checkDescription(argument);
      } else if (
        ts.isPropertyAssignment(node) &&
        (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
        ['description', 'error_description'].includes(node.name.text) &&
        (ts.isStringLiteralLike(node.initializer) || ts.isTemplateExpression(node.initializer))
      ) {
        checkDescription(node.initializer);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return { checked, problems };
}

describe('error descriptions', () => {
  it('every description in the source uses only the characters RFC 6749 allows and interpolates nothing of the request', () => {
    const sources = sourceFiles(SRC)
      .map((path) => [relative(SRC, path), readFileSync(path, 'utf8')] as const)
      .filter(([path]) => !DOCUMENTATION.some((folder) => path.startsWith(folder)));
    const { checked, problems } = findProblems(sources);
    expect(problems).toEqual([]);
    // The check found the descriptions it is about (the catalogue is used in dozens of places).
    expect(checked).toBeGreaterThan(60);
  });

  it('finds a quote, non-ASCII, an echoed value or an unreadable description (the check itself works)', () => {
    const source = [
      "const NOTE = 'say \\u0022hi\\u0022';",
      "throw new InvalidRequest('parameter \"x\" is repeated');",
      "throw new InvalidGrant(`caf\u00e9`);",
      "throw new InvalidRequest(`${name} is repeated`);",
      "throw new InvalidRequest(`${parameterLabel(name)} is repeated`);",
      'throw new UnauthorizedClient(NOTE);',
      'throw new InvalidClient(message, method);',
      "return fail('invalid_request', ok ? 'fine' : 'not \\\\ fine');",
      "const table = { X: { status: 400, description: 'a \"quoted\" word' } };",
      'reply.send({ error: "x", error_description: `no route for ${request.url}` });',
    ].join('\n');
    const { problems } = findProblems([['core/example.ts', source]]);
    expect(problems.map((p) => p.where)).toEqual([
      'core/example.ts:2',
      'core/example.ts:3',
      'core/example.ts:4',
      'core/example.ts:6',
      'core/example.ts:7',
      'core/example.ts:8',
      'core/example.ts:9',
      'core/example.ts:10',
    ]);
  });

  it('conformantDescription keeps a conforming description and replaces what RFC 6749 does not allow', () => {
    expect(conformantDescription('grant_type is required')).toBe('grant_type is required');
    expect(conformantDescription('say "hi" \\ caf\u00e9 \u{1F600}\u0000')).toBe("say 'hi' / caf? ???");
    for (const hostile of ['"', '\\', '\u00e9', '\u{1F600}', '\u0000\u001f\u007f', '\ud800']) {
      expect(conformantDescription(hostile)).toMatch(ERROR_DESCRIPTION_PATTERN);
    }
  });

  it('parameterLabel names the parameters Connect reads and nothing else', () => {
    expect(parameterLabel('grant_type')).toBe('grant_type');
    expect(parameterLabel('token')).toBe('token');
    for (const name of ['x"HOSTILE\\', 'Grant_Type', 'grant_type ', '__proto__', 'constructor', '']) expect(parameterLabel(name)).toBe('a parameter');
  });

  it('the error mapping sends a conforming description whatever the error carries, in the body and the Bearer challenge', async () => {
    const app = Fastify();
    registerErrorHandling(app);
    const hostile = 'bad "value" \\ caf\u00e9';
    app.get('/request', async () => {
      throw new InvalidRequest(hostile);
    });
    app.get('/client', async () => {
      throw new InvalidClient(hostile, 'client_secret_post');
    });
    app.get('/token', async () => {
      throw new InvalidToken(hostile);
    });
    app.get('/no-token', async () => {
      throw new InvalidToken(hostile, { credentialsMissing: true });
    });
    app.get('/scope', async () => {
      throw new InsufficientScope(hostile, 'payments:write profile');
    });
    try {
      for (const url of ['/request', '/client', '/token', '/no-token', '/scope']) {
        const res = await app.inject({ method: 'GET', url });
        const description = res.json<{ error_description: string }>().error_description;
        expect(description).toBe("bad 'value' / caf?");
        if (url === '/client') expect(res.headers['www-authenticate']).toBe('Basic realm="connect"');
        if (url === '/token') expect(res.headers['www-authenticate']).toBe(`Bearer error="invalid_token", error_description="${description}"`);
        // RFC 6750 §3.1: no token presented, no error code in the challenge (the body keeps invalid_token).
        if (url === '/no-token') expect({ challenge: res.headers['www-authenticate'], status: res.statusCode, error: res.json().error }).toEqual({ challenge: 'Bearer realm="connect"', status: 401, error: 'invalid_token' });
        if (url === '/scope') {
          // RFC 6750 §3.1: 403, and the challenge names the scopes the request needs.
          expect(res.statusCode).toBe(403);
          expect(res.json()).toMatchObject({ error: 'insufficient_scope' });
          expect(res.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="payments:write profile"');
        }
      }
    } finally {
      await app.close();
    }
  });
});
