import type { WebhookDeliveryJson, WebhookEndpointJson } from '@recur/contracts';
import { SUBSCRIBABLE_EVENT_TYPES } from '@recur/vocabulary';
import type { ApiKeyView } from '../../accounts/accounts.service';
import type { AppMode } from '../../auth/api-key';
import { formatTime, html, layout, type SafeHtml } from '../page-kit';

/** The developer portal's pages. Every form posts its session's CSRF token. */

export type Section = 'keys' | 'webhooks' | 'events' | 'settings';

export interface PortalFrame {
  email: string;
  accountName: string;
  csrf: string;
  section: Section;
  /** The app the webhooks and events sections show. */
  mode: AppMode;
}

export interface Flash {
  notice?: string;
  error?: string;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;

function header(frame: PortalFrame): SafeHtml {
  const link = (section: Section, href: string, label: string) =>
    html`<li><a href="${href}"${frame.section === section ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<header class="top"><span class="brand">Recur · ${frame.accountName}</span>
<nav aria-label="Portal sections"><ul>
${link('keys', '/portal/keys', 'API keys')}
${link('webhooks', `/portal/${frame.mode}/webhooks`, 'Webhooks')}
${link('events', `/portal/${frame.mode}/events`, 'Events')}
${link('settings', '/portal/settings', 'Settings')}
</ul></nav>
<form method="post" action="/portal/sign-out">${csrfField(frame.csrf)}<span>${frame.email}</span> <button type="submit">Sign out</button></form>
</header>`;
}

function flash(messages: Flash): SafeHtml {
  return html`${messages.notice ? html`<div class="notice" role="status">${messages.notice}</div>` : ''}${messages.error ? html`<div class="error" role="alert">${messages.error}</div>` : ''}`;
}

function page(frame: PortalFrame, title: string, body: SafeHtml): string {
  return layout(`${title} — Recur developer portal`, body, { header: header(frame) });
}

function modeSwitch(frame: PortalFrame, section: 'webhooks' | 'events'): SafeHtml {
  const other: AppMode = frame.mode === 'sandbox' ? 'live' : 'sandbox';
  return html`<p class="muted">Showing the <strong>${frame.mode}</strong> app. <a href="/portal/${other}/${section}">Show ${other}</a></p>`;
}

export function signInPage(csrf: string, error?: string, email = ''): string {
  return layout('Sign in — Recur developer portal', html`<div class="card narrow">
<h1>Sign in to the developer portal</h1>
${flash({ error })}
<form method="post" action="/portal/sign-in">
${csrfField(csrf)}
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${email}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">Accounts' sign-ins are made with <code>npx recur-admin users create</code>.</p></div>`);
}

function keyStatus(key: ApiKeyView, nowSeconds: number): SafeHtml {
  if (key.expires_at === null) return html`<span class="badge ok">active</span>`;
  if (key.expires_at <= nowSeconds) return html`<span class="badge bad">revoked</span>`;
  return html`<span class="badge wait">expires ${formatTime(key.expires_at)}</span>`;
}

const GRACE_CHOICES: [string, string][] = [['0', 'now'], ['3600', 'in 1 hour'], ['86400', 'in 24 hours'], ['604800', 'in 7 days']];

export function keysPage(frame: PortalFrame, keys: ApiKeyView[], nowSeconds: number, messages: Flash & { newKey?: ApiKeyView }): string {
  const rows = keys.map((key) => {
    const usable = key.expires_at === null || key.expires_at > nowSeconds;
    const label = key.name ?? key.redacted;
    return html`<tr data-key-id="${key.id}">
<td>${key.name ?? '—'}</td><td>${key.app}</td><td>${key.type}</td><td>${key.scope === 'read_only' ? 'read-only' : 'full'}</td>
<td class="mono">${key.redacted}</td><td>${keyStatus(key, nowSeconds)}</td><td>${formatTime(key.last_used_at)}</td>
<td>${usable && key.expires_at === null
      ? html`<form method="post" action="/portal/keys/${key.id}/roll" class="row">${csrfField(frame.csrf)}
<label for="grace-${key.id}" class="muted" style="font-weight:400;margin:0">Old key stops</label>
<select id="grace-${key.id}" name="expires_in_seconds">${GRACE_CHOICES.map(([value, text]) => html`<option value="${value}">${text}</option>`)}</select>
<button type="submit" class="secondary" aria-label="Roll ${label}">Roll</button></form>
<details><summary aria-label="Revoke ${label}…">Revoke…</summary>
<form method="post" action="/portal/keys/${key.id}/revoke">${csrfField(frame.csrf)}<p>Every request that carries ${label} is refused from now on; this cannot be undone (Roll gives a replacement first).</p><button type="submit" class="danger" aria-label="Revoke ${label} now">Revoke now</button></form>
</details>`
      : ''}</td></tr>`;
  });
  const created = messages.newKey;
  return page(frame, 'API keys', html`<h1>API keys</h1>
${flash(messages)}
${created ? html`<div class="card" role="status"><h2>Your new key</h2><p>Copy it now: it is shown this once; only its hash is stored.</p>
<p><code data-testid="new-key">${created.secret}</code></p><p class="muted">${created.app} · ${created.type} · ${created.scope}</p></div>` : ''}
<div class="card"><h2>Create a key</h2>
<form method="post" action="/portal/keys">${csrfField(frame.csrf)}
<div class="row">
<div><label for="key-app">App</label><select id="key-app" name="app"><option value="sandbox">sandbox</option><option value="live">live</option></select></div>
<div><label for="key-type">Type</label><select id="key-type" name="type"><option value="test">secret (test)</option><option value="live">secret (live)</option><option value="publishable">publishable</option></select></div>
<div><label for="key-scope">Scope</label><select id="key-scope" name="scope"><option value="full">full</option><option value="read_only">read-only</option></select></div>
<div><label for="key-name">Name (optional)</label><input id="key-name" name="name" type="text" maxlength="100"></div>
<div><button type="submit">Create key</button></div>
</div></form>
<p class="muted">A test key belongs to the sandbox app and a live key to the live app; a publishable key to either and reads plans only.</p></div>
<div class="card"><h2>Keys</h2><div class="table-wrap"><table>
<thead><tr><th scope="col">Name</th><th scope="col">App</th><th scope="col">Type</th><th scope="col">Scope</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody></table></div></div>`);
}

export function webhooksPage(frame: PortalFrame, endpoints: WebhookEndpointJson[], messages: Flash & { newSecret?: string }): string {
  const eventChoices = Object.keys(SUBSCRIBABLE_EVENT_TYPES).map(
    (type, index) => html`<label><input type="checkbox" name="events" value="${type}" id="event-${index}"> ${type}</label>`,
  );
  return page(frame, 'Webhooks', html`<h1>Webhooks</h1>
${modeSwitch(frame, 'webhooks')}
${flash(messages)}
${messages.newSecret ? html`<div class="card" role="status"><h2>Endpoint created</h2><p>Its signing secret: <code data-testid="endpoint-secret">${messages.newSecret}</code></p></div>` : ''}
<div class="card"><h2>Endpoints</h2>
${endpoints.length === 0 ? html`<p>No endpoints yet.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${endpoints.map((endpoint) => html`<tr><td><a href="/portal/${frame.mode}/webhooks/${endpoint.id}" class="mono">${endpoint.url}</a></td>
<td>${endpoint.events.join(', ')}</td><td>${endpoint.status}</td><td>${formatTime(endpoint.created)}</td></tr>`)}</tbody></table></div>`}
</div>
<div class="card"><h2>Add an endpoint</h2>
<form method="post" action="/portal/${frame.mode}/webhooks">${csrfField(frame.csrf)}
<label for="endpoint-url">Endpoint URL</label><input id="endpoint-url" name="url" type="url" required placeholder="https://example.com/webhooks/recur">
<label for="endpoint-description">Description (optional)</label><input id="endpoint-description" name="description" type="text" maxlength="500">
<fieldset><legend>Events to send</legend><div class="checks">${eventChoices}</div></fieldset>
<p><button type="submit">Add endpoint</button></p></form></div>`);
}

function deliveryStatus(status: string): SafeHtml {
  const tone = status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : 'wait';
  return html`<span class="badge ${tone}">${status}</span>`;
}

export function endpointPage(
  frame: PortalFrame,
  endpoint: WebhookEndpointJson,
  deliveries: WebhookDeliveryJson[],
  messages: Flash & { secret?: string },
): string {
  const base = `/portal/${frame.mode}/webhooks/${endpoint.id}`;
  const rows = deliveries.map((delivery) => html`<tr data-delivery-id="${delivery.id}">
<td class="mono">${delivery.event.type}<br><span class="muted">${delivery.event.id}</span></td><td>${deliveryStatus(delivery.status)}</td>
<td>${formatTime(delivery.created)}</td>
<td><details><summary>${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? '' : 's'}</summary><ol>
${delivery.attempts.map((attempt) => html`<li>${new Date(attempt.attempted_at_ms).toISOString()} — ${attempt.status_code ?? attempt.error ?? 'no answer'} in ${attempt.duration_ms} ms${attempt.manual ? ' (replay)' : ''}</li>`)}
</ol></details></td>
<td><form method="post" action="${base}/deliveries/${delivery.id}/replay">${csrfField(frame.csrf)}<button type="submit" class="secondary" aria-label="Replay ${delivery.event.type} ${delivery.event.id}">Replay</button></form></td></tr>`);
  return page(frame, `Endpoint ${endpoint.url}`, html`<p><a href="/portal/${frame.mode}/webhooks">← All endpoints</a></p>
<h1 class="mono">${endpoint.url}</h1>
${flash(messages)}
<div class="card">
<p><strong>Events:</strong> ${endpoint.events.join(', ')}</p>
<p><strong>Status:</strong> ${endpoint.status} · <strong>App:</strong> ${frame.mode} · <strong>Id:</strong> <span class="mono">${endpoint.id}</span></p>
<div class="row">
<form method="post" action="${base}/test">${csrfField(frame.csrf)}<button type="submit">Send test event</button></form>
<form method="post" action="${base}/secret">${csrfField(frame.csrf)}<button type="submit" class="secondary">Reveal signing secret</button></form>
<form method="post" action="${base}/status">${csrfField(frame.csrf)}<input type="hidden" name="status" value="${endpoint.status === 'enabled' ? 'disabled' : 'enabled'}"><button type="submit" class="secondary">${endpoint.status === 'enabled' ? 'Disable endpoint' : 'Enable endpoint'}</button></form>
</div>
<details><summary>Delete this endpoint</summary>
<form method="post" action="${base}/delete">${csrfField(frame.csrf)}<p>Deleting stops every delivery to ${endpoint.url}, pending ones included, and cannot be undone. The events stay in the event log.</p><button type="submit" class="danger">Delete endpoint</button></form>
</details>
${messages.secret ? html`<p>Signing secret: <code data-testid="endpoint-secret">${messages.secret}</code></p>` : ''}
</div>
<div class="card"><h2>Deliveries</h2>
${deliveries.length === 0 ? html`<p>No deliveries yet.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Attempts</th><th scope="col">Replay</th></tr></thead>
<tbody>${rows}</tbody></table></div>`}
<p class="muted">Newest first; this page shows the latest 20. Reload to see new attempts.</p></div>`);
}

export interface EventRow {
  id: string;
  type: string;
  created: number;
  dataJson: string;
}

export function eventsPage(frame: PortalFrame, events: EventRow[], page_: { offset: number; hasMore: boolean; total: number }): string {
  const pageSize = 25;
  return page(frame, 'Events', html`<h1>Events</h1>
${modeSwitch(frame, 'events')}
<div class="card"><div class="table-wrap"><table>
<thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Created</th><th scope="col">Data</th></tr></thead>
<tbody>${events.map((event) => html`<tr><td class="mono">${event.id}</td><td>${event.type}</td><td>${formatTime(event.created)}</td>
<td><details><summary>Show data</summary><pre class="mono" style="white-space:pre-wrap">${JSON.stringify(JSON.parse(event.dataJson), null, 2)}</pre></details></td></tr>`)}</tbody>
</table></div>
<p class="muted">${page_.total} event${page_.total === 1 ? '' : 's'}.
${page_.offset > 0 ? html`<a href="/portal/${frame.mode}/events?offset=${Math.max(0, page_.offset - pageSize)}">Newer</a>` : ''}
${page_.hasMore ? html`<a href="/portal/${frame.mode}/events?offset=${page_.offset + pageSize}">Older</a>` : ''}</p></div>`);
}

export function settingsPage(frame: PortalFrame, portalAllowsCancellation: boolean, messages: Flash): string {
  return page(frame, 'Settings', html`<h1>Settings</h1>
${flash(messages)}
<div class="card"><h2>Customer portal</h2>
<form method="post" action="/portal/settings">${csrfField(frame.csrf)}
<div class="checks"><label><input type="checkbox" name="portal_allows_cancellation" value="on"${portalAllowsCancellation ? html` checked` : ''}> Customers may cancel their subscriptions at the end of the period</label></div>
<p><button type="submit">Save</button></p></form>
<p class="muted">Customer portal links come from <code>POST /v1/customers/:id/portal-sessions</code>.</p></div>`);
}

export function portalErrorPage(title: string, message: string): string {
  return layout(`${title} — Recur developer portal`, html`<div class="card narrow"><h1>${title}</h1><p>${message}</p><p><a href="/portal">Back to the portal</a></p></div>`);
}
