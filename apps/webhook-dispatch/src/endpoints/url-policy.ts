import { BlockList, isIP } from 'node:net';
import { invalidArgument } from '@recur/kernel';

/**
 * Where deliveries may go. Recur POSTs to integrator-supplied URLs, so it must not be
 * usable to reach its own network (SSRF):
 *  - http or https only, at most 2048 characters, no credentials in the URL;
 *  - live endpoints must use https;
 *  - no private, loopback, link-local or otherwise non-public address, checked on the URL
 *    at creation and again on every resolved address at delivery time (DNS rebinding),
 *    unless the operator sets WEBHOOK_ALLOW_PRIVATE_URLS=true (local development, tests).
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) NON_PUBLIC.addSubnet(network, prefix, 'ipv6');

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !NON_PUBLIC.check(mapped[1], 'ipv4');
  return !NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export const URL_MAX_LENGTH = 2048;

export function checkEndpointUrl(raw: string, livemode: boolean, allowPrivate: boolean): string {
  if (raw.length > URL_MAX_LENGTH) throw invalidArgument('url', `url must be at most ${URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidArgument('url', 'url must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidArgument('url', 'url must use http or https');
  if (url.username || url.password) throw invalidArgument('url', 'url must not carry credentials');
  if (livemode && url.protocol !== 'https:') throw invalidArgument('url', 'live endpoints must use https', 'url_insecure');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const isLocalName = host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local');
    if (isLocalName || (isIP(host) !== 0 && !isPublicAddress(host))) {
      throw invalidArgument('url', 'url must point at a public address', 'url_not_public');
    }
  }
  return url.toString();
}
