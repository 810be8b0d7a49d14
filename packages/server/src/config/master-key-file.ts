import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MASTER_KEY_BYTES } from '../core/keys/master-key.js';
import { ConfigError } from './load.js';
import type { Config } from './schema.js';

/** The file the sandbox keeps its generated master key in, inside the data folder. */
export const MASTER_KEY_FILE = 'master-key.sandbox';

/**
 * The master key to use: `CONNECT_MASTER_KEY` when set; in the sandbox
 * otherwise the key in the data folder, generated (mode 0600) on first use.
 */
export function resolveMasterKey(config: Config): Buffer {
  if (config.masterKey) return config.masterKey;
  if (config.environment !== 'sandbox') throw new ConfigError('CONNECT_MASTER_KEY is required in production');
  const path = join(config.dataDir, MASTER_KEY_FILE);
  mkdirSync(config.dataDir, { recursive: true });
  try {
    writeFileSync(path, randomBytes(MASTER_KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== MASTER_KEY_BYTES) throw new ConfigError(`the master key in ${path} is not ${MASTER_KEY_BYTES} bytes of base64`);
  return key;
}
