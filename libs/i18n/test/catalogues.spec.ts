import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { money } from '@recur/money';
import { catalogue, catalogueDifferences, DEFAULT_LOCALE, interpolate, loadCatalogues, LOCALES, messages, placeholdersOf, resolveLocale } from '../src';

describe('message catalogues (libs/i18n/locales)', () => {
  it('are English and French, read from the files a translator edits', () => {
    expect(LOCALES).toEqual(['en', 'fr']);
  });

  it.each(LOCALES.filter((locale) => locale !== DEFAULT_LOCALE))('%s has every key of en, and no key en lacks', (locale) => {
    expect(catalogueDifferences(locale)).toEqual({ missing: [], unknown: [] });
  });

  it.each(LOCALES.filter((locale) => locale !== DEFAULT_LOCALE))('%s fills the same named placeholders as en in every message', (locale) => {
    const english = catalogue(DEFAULT_LOCALE)!;
    const translated = catalogue(locale)!;
    const different = Object.keys(english).filter((key) => placeholdersOf(english[key]).join() !== placeholdersOf(translated[key] ?? '').join());
    expect(different).toEqual([]);
  });

  it('finds a key missing from one side in either direction', () => {
    const dir = mkdtempSync(join(tmpdir(), 'recur-i18n-'));
    writeFileSync(join(dir, 'en.json'), JSON.stringify({ 'a.one': 'One', 'a.two': 'Two' }));
    writeFileSync(join(dir, 'xx.json'), JSON.stringify({ 'a.one': 'Un', 'a.three': 'Trois' }));
    expect(catalogueDifferences('xx', loadCatalogues(dir))).toEqual({ missing: ['a.two'], unknown: ['a.three'] });
  });

  it('refuses a catalogue that is not one object of texts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'recur-i18n-'));
    writeFileSync(join(dir, 'en.json'), JSON.stringify({ 'a.one': ['One'] }));
    expect(() => loadCatalogues(dir)).toThrow('en.json: a catalogue is one JSON object of key → text');
  });
});

describe('messages', () => {
  it('fill named placeholders, and refuse to print a placeholder with no value', () => {
    expect(messages('fr').t('mail.invoice.subject_from', { number: 'INV-000001', seller: 'Acme' })).toBe('Facture INV-000001 de Acme');
    expect(() => interpolate('Invoice {number}', {}, 'mail.invoice.subject')).toThrow('message mail.invoice.subject: no value for {number}');
  });

  it('throw on a key no catalogue has (a typo in code is not printed as the key)', () => {
    expect(() => messages('fr').t('invoice.no_such_key')).toThrow('no message invoice.no_such_key in the en catalogue');
  });

  it("take the customer's locale, else the account's, else English", () => {
    expect(resolveLocale('fr', 'en')).toBe('fr');
    expect(resolveLocale(null, 'fr')).toBe('fr');
    expect(resolveLocale('', '')).toBe('en');
    expect(resolveLocale('de', undefined)).toBe('en');
  });

  // Node 20.20's ICU: French groups with U+202F (narrow no-break space) and puts the code after a U+00A0.
  it('write amounts as each language does, with Intl', () => {
    expect(messages('fr').money(money(123_456, 'zmw'))).toBe('1\u202f234,56\u00a0ZMW');
    expect(messages('en').money(money(123_456, 'zmw'))).toBe('ZMW\u00a01,234.56');
    expect(messages('fr').money(money(150_000, 'xof'))).toBe('150\u202f000\u00a0F\u202fCFA');
    expect(messages('en').money(money(4_999, 'usd'))).toBe('$49.99');
  });

  it('write days in French words and English ISO 8601, in UTC', () => {
    expect(messages('fr').date('2026-12-01')).toBe('1 décembre 2026');
    expect(messages('fr').date(new Date('2026-11-27T23:30:00Z'))).toBe('27 novembre 2026');
    expect(messages('en').date('2026-12-01')).toBe('2026-12-01');
  });
});
