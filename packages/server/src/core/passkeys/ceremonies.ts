/**
 * The WebAuthn ceremonies of passkeys (docs/journey.md, "Passkeys"), done
 * by @simplewebauthn/server: options for a sign-in or an enrolment, and the
 * verification of their answers. Nothing here decides who may sign in; it
 * only says whether an answer is what the browser's authenticator made for
 * this relying party, from an accepted origin, with user verification.
 */
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { WEBAUTHN_CHALLENGE_TTL_SECONDS } from './passkeys.js';
import type { PasskeyRecord } from './records.js';

/** The relying party as ceremonies check it. */
export interface RelyingParty {
  readonly rpId: string;
  /** Accepted origins, matched exactly. */
  readonly origins: readonly string[];
}

/** Why an answer was refused (recorded in the audit log; the customer is told one thing for all). */
export type CeremonyRefusal = 'malformed' | 'origin' | 'rp_id' | 'user_verification' | 'signature' | 'counter' | 'type' | 'other';

/** A new challenge: 32 random bytes, base64url (as the options carry it and clientDataJSON names it). */
export function newChallengeBytes(): Uint8Array<ArrayBuffer> {
  return new Uint8Array(randomBytes(32));
}

/** The options of a sign-in: `allowCredentials` the given passkeys (none: discoverable), user verification required. */
export async function signInOptions(rp: RelyingParty, challenge: Uint8Array<ArrayBuffer>, allow: readonly PasskeyRecord[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    challenge,
    timeout: WEBAUTHN_CHALLENGE_TTL_SECONDS * 1000,
    userVerification: 'required',
    allowCredentials: allow.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports as AuthenticatorTransport[] })),
  });
}

/** The options of an enrolment: attestation `none`, resident key preferred, user verification required, the customer's passkeys excluded. */
export async function enrolmentOptions(
  rp: RelyingParty,
  challenge: Uint8Array<ArrayBuffer>,
  user: { readonly handle: string; readonly name: string },
  exclude: readonly PasskeyRecord[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.rpId,
    rpID: rp.rpId,
    userID: new Uint8Array(Buffer.from(user.handle, 'base64url')),
    userName: user.name,
    userDisplayName: user.name,
    challenge,
    timeout: WEBAUTHN_CHALLENGE_TTL_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: exclude.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports as AuthenticatorTransport[] })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
  });
}

/**
 * The challenge an answer's `clientDataJSON` names, read (not checked: the
 * verification checks it against the stored one); `undefined` when the
 * answer is not one.
 */
export function challengeOf(response: { readonly response?: { readonly clientDataJSON?: unknown } }): string | undefined {
  const encoded = response.response?.clientDataJSON;
  if (typeof encoded !== 'string' || encoded.length > 10_000) return undefined;
  try {
    const clientData = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof clientData.challenge === 'string' && clientData.challenge.length > 0 && clientData.challenge.length <= 200 ? clientData.challenge : undefined;
  } catch {
    return undefined;
  }
}

/** An answer of `startAuthentication()` as posted, when it has that shape. */
export function parseAuthenticationResponse(posted: string | undefined): AuthenticationResponseJSON | undefined {
  const value = parseJson(posted);
  if (!isRecord(value) || typeof value.id !== 'string' || value.id.length === 0 || value.type !== 'public-key' || !isRecord(value.response)) return undefined;
  const r = value.response;
  if (typeof r.clientDataJSON !== 'string' || typeof r.authenticatorData !== 'string' || typeof r.signature !== 'string') return undefined;
  if (r.userHandle !== undefined && r.userHandle !== null && typeof r.userHandle !== 'string') return undefined;
  return value as unknown as AuthenticationResponseJSON;
}

/** An answer of `startRegistration()` as posted, when it has that shape. */
export function parseRegistrationResponse(posted: string | undefined): RegistrationResponseJSON | undefined {
  const value = parseJson(posted);
  if (!isRecord(value) || typeof value.id !== 'string' || value.id.length === 0 || value.type !== 'public-key' || !isRecord(value.response)) return undefined;
  const r = value.response;
  if (typeof r.clientDataJSON !== 'string' || typeof r.attestationObject !== 'string') return undefined;
  return value as unknown as RegistrationResponseJSON;
}

/** What a verified sign-in answer says. */
export interface VerifiedAssertion {
  readonly newCounter: number;
  /** Backup eligible (a synced passkey): `swk`, else `hwk`. */
  readonly backupEligible: boolean;
}

/** Verifies a sign-in answer for `passkey`, against `challenge` (already consumed). */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: PasskeyRecord,
): Promise<{ ok: true; assertion: VerifiedAssertion } | { ok: false; reason: CeremonyRefusal }> {
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.rpId,
      expectedType: 'webauthn.get',
      requireUserVerification: true,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.signCount,
        transports: passkey.transports as AuthenticatorTransport[],
      },
    });
    if (!result.verified || !result.authenticationInfo.userVerified) return { ok: false, reason: result.verified ? 'user_verification' : 'signature' };
    return {
      ok: true,
      assertion: { newCounter: result.authenticationInfo.newCounter, backupEligible: result.authenticationInfo.credentialDeviceType === 'multiDevice' },
    };
  } catch (error) {
    return { ok: false, reason: refusalOf(error) };
  }
}

/** What a verified enrolment answer says. */
export interface VerifiedRegistration {
  readonly credentialId: string;
  /** COSE public key, base64url. */
  readonly publicKey: string;
  readonly signCount: number;
  readonly transports: readonly string[];
  readonly aaguid: string | null;
}

/** Verifies an enrolment answer against `challenge` (already consumed). */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  challenge: string,
): Promise<{ ok: true; registration: VerifiedRegistration } | { ok: false; reason: CeremonyRefusal }> {
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.rpId,
      expectedType: 'webauthn.create',
      requireUserVerification: true,
    });
    if (!result.verified || !result.registrationInfo) return { ok: false, reason: 'signature' };
    const info = result.registrationInfo;
    if (!info.userVerified) return { ok: false, reason: 'user_verification' };
    const transports = (response.response.transports ?? info.credential.transports ?? []).filter((t): t is AuthenticatorTransport => typeof t === 'string');
    return {
      ok: true,
      registration: {
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
        signCount: info.credential.counter,
        transports,
        aaguid: info.aaguid === '00000000-0000-0000-0000-000000000000' ? null : info.aaguid,
      },
    };
  } catch (error) {
    return { ok: false, reason: refusalOf(error) };
  }
}

/** The reason behind the library's refusal, as a bounded code (its message may quote the answer: never recorded as is). */
function refusalOf(error: unknown): CeremonyRefusal {
  const message = error instanceof Error ? error.message : '';
  if (/origin/i.test(message)) return 'origin';
  if (/RP ID/i.test(message)) return 'rp_id';
  if (/user could not be verified|user verification/i.test(message)) return 'user_verification';
  if (/counter/i.test(message)) return 'counter';
  if (/type/i.test(message)) return 'type';
  if (/signature/i.test(message)) return 'signature';
  if (/challenge/i.test(message)) return 'signature';
  return 'other';
}

function parseJson(posted: string | undefined): unknown {
  if (typeof posted !== 'string' || posted.length === 0 || posted.length > 64_000) return undefined;
  try {
    return JSON.parse(posted);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
