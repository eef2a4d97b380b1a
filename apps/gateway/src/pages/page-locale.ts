import { toTenantMessage } from '@recur/contracts';
import { type Messages, messages, resolveLocale } from '@recur/i18n';
import type { TenantRef } from '@recur/kernel';
import type { ServiceClients } from '../infrastructure/service-clients';

/**
 * The words a hosted page speaks to a customer: their `preferred_locale`, else the account's
 * `default_locale`, else English (docs/localization.md#which-language). A page still renders when
 * either lookup fails (an older service, a deleted customer): in the language it could learn.
 */
export async function pageMessages(services: ServiceClients, tenant: TenantRef, customerId: string): Promise<Messages> {
  const [customer, seller] = await Promise.all([
    // No customer known (a payment made before payments kept it): the account's language.
    customerId === '' ? undefined : services.subscription.getCustomer({ tenant: toTenantMessage(tenant), id: customerId }).then((answer) => answer.customer?.preferredLocale, () => undefined),
    services.invoicing.getSellerProfile({ accountId: tenant.accountId, includeLogo: false }).then((answer) => answer.profile?.defaultLocale, () => undefined),
  ]);
  return messages(resolveLocale(customer, seller));
}

/** The account's `default_locale` (empty when it has none or invoicing cannot answer). */
export const accountDefaultLocale = (services: ServiceClients, accountId: string): Promise<string> =>
  services.invoicing.getSellerProfile({ accountId, includeLogo: false }).then((answer) => answer.profile?.defaultLocale ?? '', () => '');

/** What a hosted page can tell a visitor instead of the page they asked for (`problem.<problem>.*` in the catalogues). */
export type PageProblem =
  | 'form_expired' | 'link_expired' | 'link_invalid' | 'account_closed' | 'subscription_missing' | 'invoice_missing' | 'item_missing'
  | 'payment_link_missing' | 'offer_missing' | 'offer_unavailable' | 'failed';

/**
 * A problem page's title and message in the visitor's language. `detail` (a service's own message
 * for a refusal, e.g. a 409's) replaces the message. A visitor nobody can be told apart from (a
 * link that is not valid) reads English: `messages(DEFAULT_LOCALE)`.
 */
export function problemText(words: Messages, problem: PageProblem, detail?: string): { title: string; message: string } {
  return { title: words.t(`problem.${problem}.title`), message: detail ?? words.t(`problem.${problem}.message`) };
}
