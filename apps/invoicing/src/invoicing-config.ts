import { ConfigError, optionalEnv, requireEnv } from '@recur/kernel';
import { DEFAULT_DUNNING_SCHEDULE_DAYS, parseDunningSchedule } from './dunning/dunning-schedule';

/** The invoicing service's own settings, from the environment (docs/operations/configuration.md). */
export interface InvoicingConfig {
  /** `host:port` of the subscription service, where customers live (required). */
  subscriptionGrpcAddr: string;
  /** Base URL of the hosted payment page (the gateway's public URL + `/pay`); an invoice's link is `<base>/<payment token>`. */
  paymentPageUrl: string;
  /** Where invoice e-mails leave: `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…:465` (required). */
  smtpUrl: string;
  /** The From header of invoice e-mails, e.g. `Acme Billing <billing@acme.example>`. */
  mailFrom: string;
  /** Whether finalizing an invoice e-mails it to the customer (default true; `INVOICE_MAIL_ON_FINALIZE=false` turns it off). */
  mailOnFinalize: boolean;
  /** Days after a failed payment at which reminders go out, unless the account has its own (`DUNNING_SCHEDULE_DAYS=3,7,14`). */
  dunningScheduleDays: number[];
}

export const INVOICING_CONFIG = Symbol('INVOICING_CONFIG');
export const DEFAULT_PAYMENT_PAGE_URL = 'http://127.0.0.1:8080/pay';
export const DEFAULT_MAIL_FROM = 'Recur <invoices@recur.localhost>';

export function invoicingConfigFromEnv(env: NodeJS.ProcessEnv = process.env): InvoicingConfig {
  const smtpUrl = requireEnv('SMTP_URL', env);
  if (!/^smtps?:\/\/[^/]+/.test(smtpUrl)) throw new ConfigError('environment variable SMTP_URL must be an smtp:// or smtps:// URL');
  return {
    subscriptionGrpcAddr: requireEnv('SUBSCRIPTION_GRPC_ADDR', env),
    paymentPageUrl: (optionalEnv('PAYMENT_PAGE_URL', env) ?? DEFAULT_PAYMENT_PAGE_URL).replace(/\/+$/, ''),
    smtpUrl,
    mailFrom: optionalEnv('MAIL_FROM', env) ?? DEFAULT_MAIL_FROM,
    mailOnFinalize: optionalEnv('INVOICE_MAIL_ON_FINALIZE', env) !== 'false',
    dunningScheduleDays: dunningScheduleFromEnv(optionalEnv('DUNNING_SCHEDULE_DAYS', env)),
  };
}

function dunningScheduleFromEnv(text: string | undefined): number[] {
  if (text === undefined) return [...DEFAULT_DUNNING_SCHEDULE_DAYS];
  try {
    return parseDunningSchedule(text);
  } catch (error) {
    throw new ConfigError(`environment variable DUNNING_SCHEDULE_DAYS: ${(error as Error).message} (e.g. 3,7,14)`);
  }
}
