import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What every server-rendered page of the gateway shares: HTML escaping (the `html` template
 * escapes every interpolated value unless it is already `SafeHtml`), one layout and stylesheet,
 * the security headers pages are sent with, and the CSRF and cookie helpers of their forms.
 * Pages load nothing from elsewhere and run no script.
 */

/** HTML that is safe to insert as is: built by `html`, never from a raw string. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

type Interpolated = SafeHtml | string | number | boolean | null | undefined | readonly Interpolated[];

function render(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** A template whose interpolations are escaped (arrays are joined, `null`/`undefined`/`false` print nothing). */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): SafeHtml {
  return new SafeHtml(strings.reduce((out, text, index) => out + text + (index < values.length ? render(values[index]) : ''), ''));
}

/** Colours meet WCAG AA contrast on their backgrounds; focus is always visible. */
const STYLE = `
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f5f6f8;color:#1b1f24;margin:0}
a{color:#0b57d0}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
header.top{background:#1b1f24;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header.top a{color:#fff}
header.top nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;margin:0;padding:0}
header.top nav a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
header.top form{margin-left:auto}
.brand{font-weight:700}
.seller{margin-bottom:1rem} .seller p{margin:.1rem 0} .seller-name{font-weight:700;font-size:1.05rem} .seller .logo{display:block;max-height:3rem;max-width:100%;margin-bottom:.5rem}
main{max-width:64rem;margin:1.5rem auto;padding:0 1rem}
.card{background:#fff;border-radius:10px;padding:1.25rem 1.5rem;margin-bottom:1.25rem;box-shadow:0 1px 6px rgba(0,0,0,.08)}
.narrow{max-width:26rem}
h1{font-size:1.6rem;margin:.25rem 0 1rem} h2{font-size:1.2rem;margin:0 0 .75rem}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;padding:.5rem .4rem;border-bottom:1px solid #d8dce2;vertical-align:top}
th{color:#464f5b;font-weight:600}
.table-wrap{overflow-x:auto}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em;word-break:break-all}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}
input[type=text],input[type=email],input[type=password],input[type=url],select{font:inherit;width:100%;max-width:28rem;padding:.5rem .6rem;border:1px solid #6b7480;border-radius:6px;background:#fff;color:#1b1f24}
.checks{display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-weight:400}
.checks label{font-weight:400;display:flex;gap:.35rem;align-items:center;margin:0}
.consent{margin-top:.75rem} .consent label{align-items:flex-start} .consent input{margin-top:.3rem;flex:none}
button{font:inherit;padding:.5rem 1rem;border-radius:6px;border:1px solid transparent;background:#0b57d0;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1b1f24;border-color:#6b7480}
button.danger{background:#b42318}
header.top button{background:transparent;border-color:#fff;padding:.3rem .8rem}
.inline{display:inline}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}
.actions{margin:1rem 0}
.amount{font-size:2rem;font-weight:700;margin:.25rem 0 1rem}
.waiting{border-left:4px solid #8a6d00;background:#fff8e1;padding:.75rem 1rem;border-radius:6px;margin-bottom:1rem}
.notice{border-left:4px solid #1a7f37;background:#e9f6ec;padding:.75rem 1rem;border-radius:6px;margin-bottom:1rem}
.error{border-left:4px solid #b42318;background:#fdecea;padding:.75rem 1rem;border-radius:6px;margin-bottom:1rem}
.muted{color:#464f5b;font-size:.9rem}
.badge{display:inline-block;border-radius:6px;padding:0 .45rem;font-size:.85rem;font-weight:600;background:#e5e7eb;color:#1b1f24}
.badge.ok{background:#dcf3e2;color:#14532d} .badge.bad{background:#fde2e0;color:#8a1c12} .badge.wait{background:#fff3cd;color:#5c4300}
td select{width:auto}
td form{margin:.15rem 0}
details{margin:.25rem 0} summary{cursor:pointer;color:#0b57d0}
`;

export interface LayoutOptions {
  /** Rendered above `main` (the portal's navigation). */
  header?: SafeHtml;
  /** Extra elements of `head` (the return page's refresh while a payment is pending). */
  head?: SafeHtml;
  /** The page's language (`<html lang>`), the locale its words came from; absent: `en`. */
  lang?: string;
}

export function layout(title: string, body: SafeHtml, options: LayoutOptions = {}): string {
  return html`<!doctype html>
<html lang="${options.lang ?? 'en'}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">${options.head}<link rel="icon" href="data:,"><title>${title}</title><style>${new SafeHtml(STYLE)}</style></head>
<body>${options.header}<main>${body}</main></body></html>`.value;
}

/**
 * Sends a page: never cached or framed, nothing loaded from elsewhere, no script. Referer only
 * to this origin: links may carry tokens, and with `no-referrer` Chromium sends `Origin: null`
 * on the pages' own form posts, which the same-origin check must then refuse.
 */
export function sendPage(response: FastifyReply, status: number, page: string): void {
  response
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    })
    .send(page);
}

/** A random token for cookies and CSRF fields (32 bytes, base64url). */
export const randomToken = (): string => randomBytes(32).toString('base64url');

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Constant-time equality of two strings (false when either is missing). */
export function tokensMatch(expected: string | undefined, given: unknown): boolean {
  if (!expected || typeof given !== 'string' || expected.length !== given.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

export function cookieValue(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) {
      try {
        return decodeURIComponent(value.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** A post whose browser names its origin must come from this host (the second CSRF wall, after the token). */
export function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  if (origin === 'null') return false;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/**
 * Cookies are `Secure` when the browser reached us over https — directly, or through a proxy
 * that says so (a proxy's claim can only make the cookie stricter).
 */
export function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https';
}

export interface CookieOptions {
  path: string;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'strict' | 'lax';
  /** Lifetime in milliseconds; without it the cookie lasts the browser session. */
  maxAge?: number;
}

/** Adds a `Set-Cookie` to the answer (the value URI-encoded, as `cookieValue` decodes it). */
export function setCookie(response: FastifyReply, name: string, value: string, options: CookieOptions): void {
  const attributes = [`${name}=${encodeURIComponent(value)}`];
  if (options.maxAge !== undefined) attributes.push(`Max-Age=${Math.floor(options.maxAge / 1000)}`);
  attributes.push(`Path=${options.path}`);
  if (options.httpOnly) attributes.push('HttpOnly');
  if (options.secure) attributes.push('Secure');
  if (options.sameSite) attributes.push(`SameSite=${options.sameSite === 'strict' ? 'Strict' : 'Lax'}`);
  // Fastify keeps every `set-cookie` header given, in order.
  response.header('set-cookie', attributes.join('; '));
}

/** Tells the browser to drop a cookie: empty, expired long ago, on the path it was set for. */
export function clearCookie(response: FastifyReply, name: string, options: { path: string }): void {
  response.header('set-cookie', `${name}=; Path=${options.path}; Expires=${new Date(0).toUTCString()}`);
}

/** The form fields of a urlencoded post, as strings (repeated fields as arrays). */
export function formOf(request: FastifyRequest): Record<string, string | string[] | undefined> {
  return (request.body ?? {}) as Record<string, string | string[] | undefined>;
}

export function field(form: Record<string, string | string[] | undefined>, name: string): string {
  const value = form[name];
  return typeof value === 'string' ? value : '';
}

/** `2026-11-26 09:41 UTC` from unix seconds. */
export function formatTime(seconds: number | null | undefined): string {
  if (!seconds) return '—';
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
