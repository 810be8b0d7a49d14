import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software authenticator for tests: makes real WebAuthn answers, as a
 * browser's `navigator.credentials` would hand them to @simplewebauthn/browser
 * — registration responses with attestation `none`, and assertions signed
 * with ES256 (P-256) by node:crypto. Flags and the signature counter are
 * set per call, so tests can make answers the server must refuse.
 */

/** The authenticator data flags it can set. */
export interface Flags {
  /** User present (UP). Default true. */
  readonly up?: boolean;
  /** User verified (UV). Default true. */
  readonly uv?: boolean;
  /** Backup eligible (BE): a synced passkey. Default false. */
  readonly be?: boolean;
  /** Backed up (BS). Default false. */
  readonly bs?: boolean;
}

/** Where a ceremony claims to run: the page's origin and the relying party ID the authenticator scopes to. */
export interface Scope {
  readonly origin: string;
  readonly rpId: string;
}

/** Options as the server sent them (only what the authenticator reads). */
interface CreationOptions {
  readonly challenge: string;
  readonly rp: { readonly id?: string };
  readonly user: { readonly id: string };
}
interface RequestOptions {
  readonly challenge: string;
}

/** One credential the authenticator holds. */
export class SoftwareCredential {
  readonly id: string;
  private readonly privateKey: KeyObject;
  private readonly x: Buffer;
  private readonly y: Buffer;
  /** The counter the next assertion carries (then advanced by one, unless set again). */
  counter: number;
  userHandle: string | undefined;

  constructor(options: { counter?: number } = {}) {
    this.id = randomBytes(16).toString('base64url');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.x = Buffer.from(jwk.x as string, 'base64url');
    this.y = Buffer.from(jwk.y as string, 'base64url');
    this.counter = options.counter ?? 0;
  }

  /** The COSE_Key of the public key (EC2, ES256, P-256). */
  cosePublicKey(): Buffer {
    return cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, this.x],
        [-3, this.y],
      ]),
    );
  }

  /**
   * A `RegistrationResponseJSON` for `options`, attestation `none`. The
   * counter of the registration is this credential's counter.
   */
  register(options: CreationOptions, scope: Scope, flags: Flags = {}): Record<string, unknown> {
    this.userHandle = options.user.id;
    const clientDataJSON = clientData('webauthn.create', options.challenge, scope.origin);
    const credentialId = Buffer.from(this.id, 'base64url');
    const attested = Buffer.concat([Buffer.alloc(16), u16(credentialId.length), credentialId, this.cosePublicKey()]);
    const authData = Buffer.concat([rpIdHash(scope.rpId), Buffer.from([flagByte(flags) | 0x40]), u32(this.counter), attested]);
    const attestationObject = cbor(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: clientDataJSON.toString('base64url'), attestationObject: attestationObject.toString('base64url'), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * An `AuthenticationResponseJSON` for `options`, signed; carries
   * `counter` (default: this credential's, advanced by one first unless it keeps none, 0).
   */
  assert(options: RequestOptions, scope: Scope, flags: Flags = {}, counter?: number): Record<string, unknown> {
    if (counter === undefined && this.counter > 0) this.counter += 1;
    const count = counter ?? this.counter;
    const clientDataJSON = clientData('webauthn.get', options.challenge, scope.origin);
    const authenticatorData = Buffer.concat([rpIdHash(scope.rpId), Buffer.from([flagByte(flags)]), u32(count)]);
    const signature = sign('sha256', Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(this.userHandle === undefined ? {} : { userHandle: this.userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function rpIdHash(rpId: string): Buffer {
  return createHash('sha256').update(rpId).digest();
}

function flagByte({ up = true, uv = true, be = false, bs = false }: Flags): number {
  return (up ? 0x01 : 0) | (uv ? 0x04 : 0) | (be ? 0x08 : 0) | (bs ? 0x10 : 0);
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
}

/** A minimal CBOR encoder (RFC 8949): integers, byte and text strings, maps. */
function cbor(value: unknown): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Map) {
    const parts: Buffer[] = [head(5, value.size)];
    for (const [k, v] of value) parts.push(cbor(k), cbor(v));
    return Buffer.concat(parts);
  }
  throw new Error(`cannot encode ${typeof value}`);
}

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.concat([Buffer.from([(major << 5) | 25]), u16(length)]);
  return Buffer.concat([Buffer.from([(major << 5) | 26]), u32(length)]);
}
