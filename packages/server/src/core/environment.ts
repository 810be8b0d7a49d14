/**
 * The two environments of Connect. One running server is one environment;
 * credentials and tokens of one are never accepted by the other.
 */
export type Environment = 'sandbox' | 'production';

/** Every environment, in the order they are documented. */
export const ENVIRONMENTS: readonly Environment[] = ['sandbox', 'production'];

/** Narrows an arbitrary string to an {@link Environment}. */
export function isEnvironment(value: string): value is Environment {
  return (ENVIRONMENTS as readonly string[]).includes(value);
}
