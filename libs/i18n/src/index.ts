import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatMoney, type Money } from '@recur/money';

/**
 * The message catalogues: one flat JSON file per language in `libs/i18n/locales/<locale>.json`,
 * key → text, placeholders named in braces (`{number}`). A translator adds a language by adding
 * a file; Recur then accepts that locale for customers and accounts (docs/localization.md).
 */
export const LOCALES_DIR = join(__dirname, '..', 'locales');

/** The language every document falls back to, and whose catalogue every key must exist in. */
export const DEFAULT_LOCALE = 'en';

export type Catalogue = Readonly<Record<string, string>>;

/** Reads every catalogue in `dir` (a file name without `.json` is its locale). */
export function loadCatalogues(dir: string = LOCALES_DIR): Map<string, Catalogue> {
  const catalogues = new Map<string, Catalogue>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json')).sort()) {
    const parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((value) => typeof value !== 'string')) {
      throw new Error(`${file}: a catalogue is one JSON object of key → text`);
    }
    catalogues.set(file.slice(0, -'.json'.length), parsed as Catalogue);
  }
  if (!catalogues.has(DEFAULT_LOCALE)) throw new Error(`${dir}: no ${DEFAULT_LOCALE}.json catalogue`);
  return catalogues;
}

const CATALOGUES = loadCatalogues();

/** The locales Recur has a catalogue for (`en`, `fr`): what `preferred_locale` and the account's `default_locale` accept. */
export const LOCALES: readonly string[] = [...CATALOGUES.keys()];

export const isLocale = (value: unknown): value is string => typeof value === 'string' && CATALOGUES.has(value);

/**
 * The locale a document for a customer is written in: the customer's `preferred_locale`, else the
 * account's `default_locale`, else English (docs/localization.md#which-language).
 */
export function resolveLocale(...preferences: (string | null | undefined)[]): string {
  return preferences.find(isLocale) ?? DEFAULT_LOCALE;
}

export type MessageParams = Readonly<Record<string, string | number>>;

/** `template` with each `{name}` replaced by `params.name`; a placeholder without its value is a bug, not a blank. */
export function interpolate(template: string, params: MessageParams = {}, key = template): string {
  return template.replace(/\{([a-z_][a-z0-9_]*)\}/gi, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`message ${key}: no value for {${name}}`);
    return String(value);
  });
}

/**
 * Dates: English documents keep ISO 8601 (`2026-11-27`, read alike by US and UK readers and what
 * English invoices always printed); every other language writes the day as its readers do with
 * Intl (`27 novembre 2026`). Dates are calendar days in UTC, as invoices store them.
 */
const ISO_DATE_LOCALES = new Set(['en']);

/** What a document in one language needs: its words and its way of writing amounts and dates. */
export interface Messages {
  readonly locale: string;
  /** The text of `key` in this language (else in English), its placeholders filled. */
  t(key: string, params?: MessageParams): string;
  /** An amount with its currency, grouped and signed as the language writes it (`1 234,56 ZMW`). */
  money(amount: Money): string;
  /** A day (a Date, or a `YYYY-MM-DD` calendar date). */
  date(day: Date | string): string;
  /** A moment to the minute, in UTC (`2026-11-27 18:00 UTC`, `27 novembre 2026 à 18:00 UTC`). */
  dateTime(at: Date): string;
  /** Whether the catalogue (or English) has `key`: for values with a word of their own when one exists (a status). */
  has(key: string): boolean;
}

export function messages(locale: string): Messages {
  const resolved = resolveLocale(locale);
  const catalogue = CATALOGUES.get(resolved)!;
  const fallback = CATALOGUES.get(DEFAULT_LOCALE)!;
  const dates = new Intl.DateTimeFormat(resolved, { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  const moments = new Intl.DateTimeFormat(resolved, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC', hourCycle: 'h23' });
  return {
    locale: resolved,
    t(key, params) {
      const template = catalogue[key] ?? fallback[key];
      if (template === undefined) throw new Error(`no message ${key} in the ${DEFAULT_LOCALE} catalogue`);
      return interpolate(template, params, key);
    },
    money: (amount) => formatMoney(amount, resolved),
    date(day) {
      const at = typeof day === 'string' ? new Date(`${day}T00:00:00Z`) : day;
      return ISO_DATE_LOCALES.has(resolved) ? at.toISOString().slice(0, 10) : dates.format(at);
    },
    dateTime: (at) => `${ISO_DATE_LOCALES.has(resolved) ? at.toISOString().slice(0, 16).replace('T', ' ') : moments.format(at)} UTC`,
    has: (key) => key in catalogue || key in fallback,
  };
}

/** Every key of `en` missing from `locale`'s catalogue, and every key `locale` has that `en` has not. */
export function catalogueDifferences(locale: string, catalogues: Map<string, Catalogue> = CATALOGUES): { missing: string[]; unknown: string[] } {
  const reference = Object.keys(catalogues.get(DEFAULT_LOCALE) ?? {});
  const keys = Object.keys(catalogues.get(locale) ?? {});
  return { missing: reference.filter((key) => !keys.includes(key)), unknown: keys.filter((key) => !reference.includes(key)) };
}

/** The placeholders a template names, sorted (`{number}`, `{seller}` → ['number', 'seller']). */
export const placeholdersOf = (template: string): string[] =>
  [...new Set([...template.matchAll(/\{([a-z_][a-z0-9_]*)\}/gi)].map((match) => match[1]))].sort();

export const catalogue = (locale: string): Catalogue | undefined => CATALOGUES.get(locale);
