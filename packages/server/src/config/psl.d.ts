// The Public Suffix List package ships types its `exports` do not name; what load.ts uses of it.
declare module 'psl' {
  /** The registrable domain of `domain` (one label below its public suffix), or `null` when it has none. */
  function get(domain: string): string | null;
  const psl: { get: typeof get };
  export default psl;
}
