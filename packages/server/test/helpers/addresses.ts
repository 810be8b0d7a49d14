import { parseClientAddress, type ClientAddress } from '../../src/core/client-address.js';

/** `text` parsed as the edge parses a client address; throws when it is not one. */
export function testAddress(text: string): ClientAddress {
  const address = parseClientAddress(text);
  if (!address) throw new Error(`testAddress: ${text} is not an address`);
  return address;
}
