import { createHash, type KeyObject, sign as signBytes, verify as verifyBytes } from 'node:crypto';
import { DomainError } from '@recur/kernel';

/**
 * HTTP Message Signatures (RFC 9421) with Content-Digest (RFC 9530), as pawaPay signs its
 * callbacks: `Content-Digest: sha-512=:…:`, `Signature-Input: sig-pp=("@method" "@authority"
 * "@path" "signature-date" "content-digest" "content-type");alg="ecdsa-p256-sha256";keyid="…";created=…;expires=…`
 * and `Signature: sig-pp=:…:`. Verification recomputes the digest of the raw body and the
 * signature base of the covered components, and checks it with the provider's public key.
 *
 * An ECDSA signature is accepted in both encodings pawaPay's material produces: the raw `r‖s` of
 * RFC 9421 §3.3.4, and DER, which pawaPay's own samples (pawaPay/signatures-node-example,
 * `createVerify('SHA256').verify(key, signature, 'base64')`; the Java sample's `SHA256withECDSA`)
 * make and check. `@query` and `@request-target` are derived components like `@path` (RFC 9421
 * §2.2), from the request's path and query.
 */

/** The algorithms pawaPay documents, as RFC 9421 names them. */
const ALGORITHMS = {
  'ecdsa-p256-sha256': { hash: 'sha256', options: { dsaEncoding: 'ieee-p1363' as const } },
  'ecdsa-p384-sha384': { hash: 'sha384', options: { dsaEncoding: 'ieee-p1363' as const } },
  'rsa-v1_5-sha256': { hash: 'sha256', options: {} },
  'rsa-pss-sha512': { hash: 'sha512', options: { padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 64 } },
} as const;
export type SignatureAlgorithm = keyof typeof ALGORITHMS;

export interface SignedRequest {
  method: string;
  authority: string;
  path: string;
  /** Header names in lowercase. */
  headers: Record<string, string>;
  body: Uint8Array;
}

const unauthenticated = (message: string) => new DomainError('unauthenticated', 'signature_invalid', message);

/** `sha-512=:<base64>:` of the body. */
export function contentDigest(body: Uint8Array, algorithm: 'sha-256' | 'sha-512' = 'sha-512'): string {
  return `${algorithm}=:${createHash(algorithm.replace('-', '')).update(body).digest('base64')}:`;
}

function componentValue(request: SignedRequest, name: string): string {
  const queryAt = request.path.indexOf('?');
  switch (name) {
    case '@method': return request.method.toUpperCase();
    case '@authority': return request.authority.toLowerCase();
    case '@path': return queryAt < 0 ? request.path : request.path.slice(0, queryAt);
    // RFC 9421 §2.2.7: the query with its leading `?`; an absent query is `?`.
    case '@query': return queryAt < 0 ? '?' : request.path.slice(queryAt);
    case '@request-target': return request.path;
    default: {
      const value = request.headers[name];
      if (value === undefined) throw unauthenticated(`the signed header '${name}' is missing`);
      return value.trim();
    }
  }
}

/** The RFC 9421 signature base of `request` for the components and parameters of one signature. */
export function signatureBase(request: SignedRequest, components: string[], params: string): string {
  const lines = components.map((name) => `"${name}": ${componentValue(request, name)}`);
  return [...lines, `"@signature-params": ${params}`].join('\n');
}

interface ParsedInput {
  components: string[];
  /** The inner list with its parameters, exactly as it must appear in the signature base. */
  params: string;
  alg?: string;
  keyid?: string;
  created?: number;
  expires?: number;
}

function parseSignatureInput(header: string, label: string): ParsedInput {
  const entry = header.split(/,(?=\s*[a-z0-9_-]+=\()/i).map((part) => part.trim()).find((part) => part.startsWith(`${label}=`));
  if (!entry) throw unauthenticated(`Signature-Input has no signature '${label}'`);
  const params = entry.slice(label.length + 1);
  const match = /^\(([^)]*)\)(.*)$/.exec(params);
  if (!match) throw unauthenticated('Signature-Input is malformed');
  const components = [...match[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  const parameter = (name: string) => new RegExp(`;${name}=("?)([^;"]*)\\1`).exec(match[2])?.[2];
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  return { components, params, alg: parameter('alg'), keyid: parameter('keyid'), created: number(parameter('created')), expires: number(parameter('expires')) };
}

function parseSignature(header: string, label: string): Buffer {
  const match = new RegExp(`(?:^|,)\\s*${label}=:([A-Za-z0-9+/=]+):`).exec(header);
  if (!match) throw unauthenticated(`Signature has no signature '${label}'`);
  return Buffer.from(match[1], 'base64');
}

/** The `keyid` of the request's first signature (Signature-Input), to pick the provider's key by; undefined when absent. */
export function signatureKeyId(request: Pick<SignedRequest, 'headers'>): string | undefined {
  const input = request.headers['signature-input'];
  const label = input && /^\s*([a-z0-9_-]+)=/i.exec(input)?.[1];
  if (!input || !label) return undefined;
  try {
    return parseSignatureInput(input, label).keyid;
  } catch {
    return undefined;
  }
}

export interface VerifyOptions {
  publicKey: KeyObject;
  /** The components a signature must cover to be accepted. */
  required: string[];
  now: Date;
}

/**
 * Verifies the first signature of the request (its label from Signature-Input) and the body's
 * Content-Digest. Throws `unauthenticated` (code `signature_invalid`) on any mismatch.
 */
export function verifySignedRequest(request: SignedRequest, options: VerifyOptions): void {
  const input = request.headers['signature-input'];
  const signature = request.headers['signature'];
  const digest = request.headers['content-digest'];
  if (!input || !signature || !digest) throw unauthenticated('the callback is not signed (Signature, Signature-Input and Content-Digest are required)');
  const digestMatch = /^(sha-256|sha-512)=:/.exec(digest.trim());
  if (!digestMatch || contentDigest(request.body, digestMatch[1] as 'sha-256' | 'sha-512') !== digest.trim()) throw unauthenticated('Content-Digest does not match the body');
  const label = /^\s*([a-z0-9_-]+)=/i.exec(input)?.[1];
  if (!label) throw unauthenticated('Signature-Input is malformed');
  const parsed = parseSignatureInput(input, label);
  for (const name of options.required) if (!parsed.components.includes(name)) throw unauthenticated(`the signature does not cover '${name}'`);
  const algorithm = ALGORITHMS[parsed.alg as SignatureAlgorithm] ?? algorithmOfKey(options.publicKey);
  if (parsed.expires !== undefined && parsed.expires * 1000 < options.now.getTime()) throw unauthenticated('the signature has expired');
  const base = Buffer.from(signatureBase(request, parsed.components, parsed.params));
  const signed = parseSignature(signature, label);
  const valid = verifyBytes(algorithm.hash, base, { key: options.publicKey, ...algorithm.options }, signed)
    // ECDSA in DER, as pawaPay's samples sign and verify.
    || ('dsaEncoding' in algorithm.options && verifyBytes(algorithm.hash, base, { key: options.publicKey, dsaEncoding: 'der' }, signed));
  if (!valid) throw unauthenticated('the signature does not verify with the provider key');
}

function algorithmOfKey(key: KeyObject): (typeof ALGORITHMS)[SignatureAlgorithm] {
  if (key.asymmetricKeyType === 'ec') return key.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? ALGORITHMS['ecdsa-p384-sha384'] : ALGORITHMS['ecdsa-p256-sha256'];
  return ALGORITHMS['rsa-v1_5-sha256'];
}

/**
 * Signs a request the way the verifier expects (adds Content-Digest, Signature-Date,
 * Signature-Input and Signature). The test fake of pawaPay signs its callbacks with it.
 */
export interface SignOptions {
  algorithm?: SignatureAlgorithm;
  /** The covered components; default pawaPay's callback set. */
  components?: string[];
  /** `der`: an ECDSA signature in DER, as pawaPay's sample code makes it; default the raw r‖s of RFC 9421. */
  ecdsaEncoding?: 'ieee-p1363' | 'der';
}

export function signRequest(request: Omit<SignedRequest, 'headers'> & { headers: Record<string, string> }, privateKey: KeyObject, keyId: string, now: Date, options: SignOptions = {}): Record<string, string> {
  const algorithm = options.algorithm ?? 'ecdsa-p256-sha256';
  const created = Math.floor(now.getTime() / 1000);
  const headers: Record<string, string> = { ...request.headers, 'content-digest': contentDigest(request.body), 'signature-date': now.toISOString() };
  const components = options.components ?? ['@method', '@authority', '@path', 'signature-date', 'content-digest', 'content-type'];
  const params = `(${components.map((c) => `"${c}"`).join(' ')});alg="${algorithm}";keyid="${keyId}";created=${created};expires=${created + 60}`;
  const base = Buffer.from(signatureBase({ ...request, headers }, components, params));
  const spec = ALGORITHMS[algorithm];
  const signature = signBytes(spec.hash, base, { key: privateKey, ...spec.options, ...('dsaEncoding' in spec.options && options.ecdsaEncoding ? { dsaEncoding: options.ecdsaEncoding } : {}) });
  return { ...headers, 'signature-input': `sig-pp=${params}`, signature: `sig-pp=:${signature.toString('base64')}:` };
}
