// `npm run demo`: a Connect sandbox (seeded demo client, resource server and
// customer), the demo shop and the example platform API together in one
// process. Built code only: run `npm run build` first.
import { startServer } from '@connect-auth/server';
import { startConsumerApp } from './dist/consumer-app.js';
import { startPlatformApi } from './dist/platform-api.js';

const SHOP_PORT = 4000;
const API_PORT = 4001; // the example platform API, a resource server

const connect = await startServer({
  env: { CONNECT_LOG_LEVEL: 'warn', ...process.env },
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
  console.error(`The demo shop or platform API could not listen on 127.0.0.1:${SHOP_PORT} / ${API_PORT}: ${error.message}`);
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
