import { describe, expect, it } from 'vitest';
import { en } from '../../../src/http/views/messages/en.js';
import { fil } from '../../../src/http/views/messages/fil.js';
import { describeScope } from '../../../src/http/views/scope-wording.js';

/** The default wording of a scope without the operator's description (docs/hosted-login.md, "Consent"). */
describe('describeScope', () => {
  it.each([
    ['openid', 'Confirm who you are', 'Kumpirmahin kung sino ka'],
    ['offline_access', 'Stay linked to your account when you are not using the app', 'Manatiling naka-link sa iyong account kahit hindi mo ginagamit ang app'],
    ['payments:read', 'See your payments', 'Makita ang iyong payments'],
    ['read:payments', 'See your payments', 'Makita ang iyong payments'],
    ['payments.READ', 'See your payments', 'Makita ang iyong payments'],
    ['payment_history:view', 'See your payment history', 'Makita ang iyong payment history'],
    ['loyalty-points.write', 'Make changes to your loyalty points', 'Gumawa ng mga pagbabago sa iyong loyalty points'],
    ['transfer:wallet', 'Make changes to your wallet', 'Gumawa ng mga pagbabago sa iyong wallet'],
    ['https://api.example.ph/wallet:read', 'See your wallet', 'Makita ang iyong wallet'],
    ['https://api.example.ph/orders', 'Use the access named “https://api.example.ph/orders”', 'Gamitin ang access na “https://api.example.ph/orders”'],
    ['admin', 'Use the access named “admin”', 'Gamitin ang access na “admin”'],
    ['payments:refund', 'Use the access named “payments:refund”', 'Gamitin ang access na “payments:refund”'],
    ['a:b:read', 'Use the access named “a:b:read”', 'Gamitin ang access na “a:b:read”'],
    [':read', 'Use the access named “:read”', 'Gamitin ang access na “:read”'],
    ['<b>:read', 'Use the access named “&lt;b&gt;:read”', 'Gamitin ang access na “&lt;b&gt;:read”'],
  ])('%s: %s / %s', (scope, english, filipino) => {
    expect(describeScope(en, scope).value).toBe(english);
    expect(describeScope(fil, scope).value).toBe(filipino);
  });
});
