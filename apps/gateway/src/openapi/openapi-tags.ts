/**
 * The OpenAPI document's tags: one per resource group (each route table's `defineRoutes` tag),
 * with what the group is and the guide page that tells it (docs/api/README.md).
 */
export const OPENAPI_TAGS: Record<string, { description: string; page: string }> = {
  Customers: { description: 'The people and companies you bill, and links to their customer portal.', page: 'docs/api/customers.md' },
  Plans: { description: 'What you sell: prices per interval, tiers and metered price components.', page: 'docs/api/catalog.md' },
  'Add-ons': { description: 'Extras priced monthly that a subscription may carry beside its plan.', page: 'docs/api/catalog.md#add-ons' },
  'Coupons and promotion codes': { description: 'Discounts (coupons) and the codes customers type to get them.', page: 'docs/api/catalog.md#coupons' },
  'Sales links': { description: 'Hosted checkout links that sell a plan or a one-off amount.', page: 'docs/api/sales-links.md' },
  Subscriptions: { description: 'A customer on a plan: trials, changes, pauses, discounts, the upcoming invoice.', page: 'docs/api/subscriptions.md' },
  Invoices: { description: 'One-off and renewal invoices: finalize, void, PDF, e-mail, the payment link.', page: 'docs/api/invoices.md' },
  Payments: { description: 'Collecting an invoice: initiation, the hosted payment page, settlement.', page: 'docs/api/payments.md' },
  'Payment methods': { description: "A customer's saved mobile-money numbers, used for automatic collection.", page: 'docs/api/payment-methods.md' },
  Refunds: { description: 'Money returned on a paid invoice, with its credit note.', page: 'docs/api/refunds.md' },
  'Credit notes': { description: 'Credit on an invoice without moving money: it owes less, or the customer balance grows.', page: 'docs/api/credit-notes.md' },
  Wallets: { description: 'Prepaid balances: top-ups, the ledger, automatic recharge.', page: 'docs/api/wallets.md' },
  Usage: { description: 'Metered usage: records, totals, limits and threshold alerts.', page: 'docs/api/usage.md' },
  'Customer balance': { description: 'Credit a customer holds (manual adjustments, credit notes), consumed by their next invoices.', page: 'docs/api/customer-balance.md' },
  'Tax rates': { description: 'The rates that tax invoice lines (VAT), by country, customer, line or account default.', page: 'docs/api/tax-rates.md' },
  Account: { description: 'The seller’s legal details and branding, printed on every invoice and credit note.', page: 'docs/api/account.md' },
  Dunning: { description: 'The reminders sent for an unpaid invoice before a subscription goes past due.', page: 'docs/api/dunning.md' },
  'Test clocks': { description: 'Sandbox clocks that move a customer’s subscriptions through time.', page: 'docs/sandbox.md#test-clocks' },
  Webhooks: { description: 'Endpoints that receive the account’s events, their deliveries and replays.', page: 'docs/webhooks.md' },
  Events: { description: 'The account’s events, exactly as its webhooks carry them.', page: 'docs/api/events.md' },
  'Webhook events': { description: 'What Recur POSTs to a webhook endpoint: one signed envelope per event type (the `webhooks` section).', page: 'docs/webhooks.md#event-types' },
};
