// `npm run demo`: a Connect sandbox (seeded demo client and customer) and the
// demo shop together in one process. Built code only: run `npm run build` first.
import { startServer } from '@connect-auth/server';
import { startConsumerApp } from './dist/consumer-app.js';

const SHOP_PORT = 4000;

const connect = await startServer({
  env: { CONNECT_LOG_LEVEL: 'warn', ...process.env },
  seedDemo: true,
  // The demo client takes its customers back to the shop (with `npm start`, to the sandbox's callback page).
  demoRedirectUri: `http://127.0.0.1:${SHOP_PORT}/callback`,
  print: () => {},
});
const { demo, urls } = connect;
let shop;
try {
  shop = await startConsumerApp({
    connect: { authUrl: urls.authUrl, baseUrl: urls.baseUrl, clientId: demo.clientId, clientSecret: demo.clientSecret },
    redirectUri: `http://127.0.0.1:${SHOP_PORT}/callback`,
    host: '127.0.0.1',
    port: SHOP_PORT,
  });
} catch (error) {
  await connect.close();
  console.error(`The demo shop could not listen on 127.0.0.1:${SHOP_PORT}: ${error.message}`);
  process.exit(1);
}

console.log(
  [
    '',
    `Connect sandbox: ${urls.authUrl}`,
    `Demo shop:       ${shop.url}   <- open this`,
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
  await connect.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
