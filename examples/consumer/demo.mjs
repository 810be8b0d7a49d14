// `npm run demo`: a Connect sandbox (seeded demo client, resource server and
// customer), the demo shop and the example platform API together in one
// process. Built code only: run `npm run build` first.
import { startServer } from '@connect-auth/server';
import { startConsumerApp } from './dist/consumer-app.js';
import { startPlatformApi } from './dist/platform-api.js';

// Each listener has its own variable, with a default: PORT is Connect's
// (as for `npm start`), SHOP_PORT the shop's and API_PORT the platform
// API's (as for examples/consumer/dist/main.js). PORT=0 picks a free port.
const port = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > 65535 || (value === 0 && name !== 'PORT')) {
    console.error(`${name} must be a port number from 1 to 65535${name === 'PORT' ? ' (or 0 for a free one)' : ''}, not ${JSON.stringify(raw)}`);
    process.exit(1);
  }
  return value;
};
const CONNECT_PORT = port('PORT', 3000);
const SHOP_PORT = port('SHOP_PORT', 4000);
const API_PORT = port('API_PORT', 4001); // the example platform API, a resource server
const ports = [
  ['PORT', CONNECT_PORT, 'Connect'],
  ['SHOP_PORT', SHOP_PORT, 'the demo shop'],
  ['API_PORT', API_PORT, 'the platform API'],
];
for (const [i, [name, value, what]] of ports.entries()) {
  for (const [otherName, otherValue, otherWhat] of ports.slice(i + 1)) {
    if (value !== 0 && value === otherValue) {
      console.error(`${name} and ${otherName} are both ${value}: ${what} and ${otherWhat} need a port each; set one of them to another port`);
      process.exit(1);
    }
  }
}
console.log(`Ports: Connect ${CONNECT_PORT} (PORT), demo shop ${SHOP_PORT} (SHOP_PORT), platform API ${API_PORT} (API_PORT)`);

const connect = await startServer({
  env: { CONNECT_LOG_LEVEL: 'warn', ...process.env, PORT: String(CONNECT_PORT) },
  seedDemo: true,
  // The demo client takes its customers back to the shop (with `npm start`, to the sandbox's callback page).
  demoRedirectUri: `http://127.0.0.1:${SHOP_PORT}/callback`,
  print: () => {},
});
const { demo, urls } = connect;
let shop;
let api;
try {
  // The platform's API checks customer tokens with the demo resource server's credentials: no key of Connect's.
  api = await startPlatformApi({
    connect: { authUrl: urls.authUrl, clientId: demo.resourceServer.clientId, clientSecret: demo.resourceServer.clientSecret },
    host: '127.0.0.1',
    port: API_PORT,
  });
  shop = await startConsumerApp({
    connect: { authUrl: urls.authUrl, baseUrl: urls.baseUrl, clientId: demo.clientId, clientSecret: demo.clientSecret },
    redirectUri: `http://127.0.0.1:${SHOP_PORT}/callback`,
    profileUrl: `${api.url}/customer/profile`,
    host: '127.0.0.1',
    port: SHOP_PORT,
  });
} catch (error) {
  await api?.close();
  await connect.close();
  console.error(
    `The demo shop (127.0.0.1:${SHOP_PORT}, SHOP_PORT) or the platform API (127.0.0.1:${API_PORT}, API_PORT) could not listen: ${error.message}`,
  );
  process.exit(1);
}

console.log(
  [
    '',
    `Connect sandbox: ${urls.authUrl}`,
    `Demo shop:       ${shop.url}   <- open this`,
    `Platform API:    ${api.url}/customer/profile (checks customer tokens at /introspect)`,
    '',
    'Log in as the demo customer:',
    `  mobile:        ${demo.customer.mobile}`,
    `  PIN:           ${demo.customer.pin}`,
    `  one-time PIN:  ${urls.authUrl}/sandbox/messages?to=${encodeURIComponent(demo.customer.mobile)}`,
    '',
    'Ctrl-C stops both.',
    '',
  ].join('\n'),
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await shop.close();
  await api.close();
  await connect.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
