import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { freePort, readmeBlock, readmeClientsCreate, runNode, waitForListening, type NodeProcess } from './support/readme.js';
import { startConnect, type TestConnect } from './support/test-connect.js';

/*
 * The SDK as a merchant gets it: `npm pack`, then the tarball installed with
 * npm into an empty project outside this repository (no workspace, no
 * symlink to src), and the README's own code run there against a sandbox
 * Connect: step 3's `token.mjs`, then the whole consumer through a
 * customer's login. The SDK's one runtime dependency, jose (package.test.ts
 * checks it), comes from npm's cache when it has it (`--prefer-offline`).
 */

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY = join(PACKAGE_DIR, '../..');
const run = promisify(execFile);

let project: string;
let connect: TestConnect;
let consumer: NodeProcess | undefined;

beforeAll(async () => {
  project = await realpath(await mkdtemp(join(tmpdir(), 'connect-sdk-install-')));
  if (!relative(await realpath(REPOSITORY), project).startsWith('..')) throw new Error(`${project} is inside the repository`);
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], { cwd: PACKAGE_DIR });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; version: string }>;
  if (!packed) throw new Error(`npm pack printed no tarball: ${stdout}`);
  expect(packed.filename).toBe(`connect-auth-client-${packed.version}.tgz`);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', private: true }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${packed.filename}`], { cwd: project });
  connect = await startConnect();
}, 120_000);

afterAll(async () => {
  consumer?.child.kill();
  await connect?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the SDK installed from its tarball, outside the repository', () => {
  it('resolves from the project: package.json records the tarball and node loads the installed copy', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(manifest.dependencies?.['@connect-auth/client']).toMatch(/^file:connect-auth-client-\d+\.\d+\.\d+\.tgz$/);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('@connect-auth/client'))"], { cwd: project });
    expect(fileURLToPath(stdout.trim())).toBe(join(project, 'node_modules/@connect-auth/client/dist/index.js'));
  });

  it('gives TypeScript its declarations through the exports map', async () => {
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, lib: ['es2023', 'dom'], types: [] }, files: ['check.mts'] }),
    );
    await writeFile(
      join(project, 'check.mts'),
      "import { ClientCredentialsProvider, type ClientToken } from '@connect-auth/client';\n" +
        "const token: Promise<ClientToken> = new ClientCredentialsProvider({ authUrl: 'https://auth.example', clientId: 'id', clientSecret: 'secret' }).getToken();\n" +
        'export const expiresAt: Promise<number> = token.then((t) => t.expiresAt);\n',
    );
    const tsc = join(REPOSITORY, 'node_modules/typescript/bin/tsc');
    await expect(run(process.execPath, [tsc, '-p', project], { cwd: project })).resolves.toMatchObject({ stdout: '' });
  }, 60_000);

  it("runs the README's token.mjs", async () => {
    await writeFile(join(project, 'token.mjs'), await readmeBlock('client token'));
    const { clientId, clientSecret } = connect.demo;
    const token = runNode('token.mjs', project, { CONNECT_AUTH_URL: connect.authUrl, CONNECT_CLIENT_ID: clientId, CONNECT_CLIENT_SECRET: clientSecret });
    expect({ code: await token.exited, output: token.output() }).toEqual({ code: 0, output: expect.stringMatching(/^eyJ\S{17}… expires at \S/) });
  }, 30_000);

  it("runs the README's whole consumer, with the client its README line registers, through a customer's login", async () => {
    const port = await freePort();
    const consumerUrl = `http://127.0.0.1:${port}`;
    const { clientId, clientSecret } = (await connect.cli(await readmeClientsCreate(`${consumerUrl}/callback`))) as { clientId: string; clientSecret: string };
    await writeFile(join(project, 'consumer.mjs'), await readmeBlock('minimal consumer'));
    consumer = runNode('consumer.mjs', project, { CONNECT_AUTH_URL: connect.authUrl, CONNECT_CLIENT_ID: clientId, CONNECT_CLIENT_SECRET: clientSecret, PORT: String(port) });
    await waitForListening(consumerUrl, consumer);

    const first = await fetch(consumerUrl, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const callback = await new BrowserSession(connect.authUrl).authorize(first.headers.get('location') ?? '', connect.demo.customer);
    expect(callback.startsWith(`${consumerUrl}/callback?`)).toBe(true);
    const linked = await fetch(callback, { redirect: 'manual' });
    expect({ status: linked.status, output: consumer.output() }).toEqual({ status: 200, output: '' });
    expect(await linked.json()).toMatchObject({ profileId: connect.demo.customer.profileId, clientId });
  }, 60_000);
});
