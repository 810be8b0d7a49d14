/** Work run once a request has been answered, and waited for at shutdown. */
export interface AfterAnswer {
  /** Starts `work` after the current turn (the page's answer goes out first); a failure goes to the log. */
  run(work: () => Promise<void>): void;
  /** Resolves once every work started so far has ended. */
  idle(): Promise<void>;
}

/**
 * Runs work after the answer, as a PIN reset's SMS is sent
 * (docs/hosted-login.md, "Forgot PIN"): the answer does not wait for the
 * SMS gateway, so how long it takes tells nothing. Each work is started on
 * the next turn of the event loop; what it throws goes to `report` (a
 * gateway's refusal is reported by the work itself). The services wait for the work
 * still running when they close.
 */
export function createAfterAnswer(report: (error: unknown) => void): AfterAnswer {
  const running = new Set<Promise<void>>();
  return {
    run(work) {
      const started: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch(report)
        .finally(() => running.delete(started));
      running.add(started);
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
