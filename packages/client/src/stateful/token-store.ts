import type { CustomerTokens } from '../flows/customer-tokens.js';

/**
 * Where a {@link CustomerTokenManager} keeps each customer's tokens, by a
 * customer key of your choosing (your own user ID, for instance). Methods
 * may be synchronous or return promises. A database-backed store must keep
 * the tokens secret (encrypted at rest) and may serialise them as JSON.
 *
 * @example
 * const store: TokenStore = {
 *   get: async (key) => JSON.parse((await redis.get(`connect:${key}`)) ?? 'null') ?? undefined,
 *   set: async (key, tokens) => void (await redis.set(`connect:${key}`, JSON.stringify(tokens))),
 *   delete: async (key) => void (await redis.del(`connect:${key}`)),
 * };
 */
export interface TokenStore {
  /** The tokens stored for `customerKey`, or `undefined`. */
  get(customerKey: string): Promise<CustomerTokens | undefined> | CustomerTokens | undefined;
  /** Stores (replaces) the tokens of `customerKey`. */
  set(customerKey: string, tokens: CustomerTokens): Promise<void> | void;
  /** Forgets the tokens of `customerKey`; nothing happens when there are none. */
  delete(customerKey: string): Promise<void> | void;
}

/** A {@link TokenStore} in this process's memory: the default, lost on restart. */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, CustomerTokens>();

  /** The tokens stored for `customerKey`, or `undefined`. */
  get(customerKey: string): CustomerTokens | undefined {
    return this.#tokens.get(customerKey);
  }

  /** Stores (replaces) the tokens of `customerKey`. */
  set(customerKey: string, tokens: CustomerTokens): void {
    this.#tokens.set(customerKey, tokens);
  }

  /** Forgets the tokens of `customerKey`. */
  delete(customerKey: string): void {
    this.#tokens.delete(customerKey);
  }
}
