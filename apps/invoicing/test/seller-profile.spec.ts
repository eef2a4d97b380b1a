import { isDomainError } from '@recur/kernel';
import { emptySellerProfile, LOGO_MAX_BYTES, logoContentType, updateSellerProfile } from '../src/seller/seller-profile';

/** The seller profile's rules (`/v1/account`): what each field accepts, and what a logo may be. */
const now = new Date('2026-11-27T12:00:00Z');
const refusedParam = (work: () => unknown): string | undefined => {
  try {
    work();
  } catch (error) {
    if (isDomainError(error)) return error.param;
    throw error;
  }
  throw new Error('expected a refusal');
};
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const svg = (body: string) => Buffer.from(`<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">${body}</svg>`);

describe('a seller profile update', () => {
  it('sets what it carries, trims, lowercases the colour, uppercases the country and keeps the rest', () => {
    const first = updateSellerProfile(emptySellerProfile('acct_1'), { legalName: '  Kafue Fibre Ltd ', brandColor: '#0A7D3B', address: { line1: 'Plot 1', line2: '', city: 'Lusaka', region: '', postalCode: '', country: 'zm' } }, now);
    expect(first).toMatchObject({ legalName: 'Kafue Fibre Ltd', brandColor: '#0a7d3b', address: { country: 'ZM', city: 'Lusaka' }, updatedAt: now });
    const second = updateSellerProfile(first, { taxId: 'TPIN 1' }, now);
    expect(second).toMatchObject({ legalName: 'Kafue Fibre Ltd', taxId: 'TPIN 1', address: { city: 'Lusaka' } });
    expect(updateSellerProfile(second, { legalName: '' }, now).legalName).toBe('');
  });

  it('refuses, naming the field: a colour not #rrggbb, a country not alpha-2, a bad e-mail, too long a text, a newline in a one-line field', () => {
    const profile = emptySellerProfile('acct_1');
    expect(refusedParam(() => updateSellerProfile(profile, { brandColor: 'green' }, now))).toBe('brand_color');
    expect(refusedParam(() => updateSellerProfile(profile, { address: { line1: '', line2: '', city: '', region: '', postalCode: '', country: 'ZMB' } }, now))).toBe('address.country');
    // Two letters are not enough: the code must be one of ISO 3166-1's.
    expect(refusedParam(() => updateSellerProfile(profile, { address: { line1: '', line2: '', city: '', region: '', postalCode: '', country: 'ZZ' } }, now))).toBe('address.country');
    expect(refusedParam(() => updateSellerProfile(profile, { supportEmail: 'billing' }, now))).toBe('support_email');
    expect(refusedParam(() => updateSellerProfile(profile, { legalName: 'x'.repeat(201) }, now))).toBe('legal_name');
    expect(refusedParam(() => updateSellerProfile(profile, { taxId: 'TPIN\n1' }, now))).toBe('tax_id');
    expect(updateSellerProfile(profile, { invoiceFooter: 'Line one\nLine two' }, now).invoiceFooter).toBe('Line one\nLine two');
  });
});

describe('a logo', () => {
  it('is a PNG or an SVG by its bytes, whatever it was called', () => {
    expect(logoContentType(PNG)).toBe('image/png');
    expect(logoContentType(svg('<rect width="10" height="10" fill="#0a7d3b"/>'))).toBe('image/svg+xml');
    expect(refusedParam(() => logoContentType(Buffer.from('GIF89a…')))).toBe('logo');
    expect(refusedParam(() => logoContentType(Buffer.concat([PNG, Buffer.alloc(LOGO_MAX_BYTES)])))).toBe('logo');
  });

  it('as an SVG holds no script, event handler, entity, foreign object or external link', () => {
    for (const body of ['<script>alert(1)</script>', '<rect onload="alert(1)"/>', '<foreignObject><div/></foreignObject>', '<a href="https://evil.example"><rect/></a>', '<image xlink:href="https://evil.example/x.png"/>', '<a href="javascript:alert(1)"/>']) {
      expect([body, refusedParam(() => logoContentType(svg(body)))]).toEqual([body, 'logo']);
    }
    expect(refusedParam(() => logoContentType(Buffer.from('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg/>')))).toBe('logo');
    // An internal reference (a gradient) is fine.
    expect(logoContentType(svg('<defs><linearGradient id="g"/></defs><rect fill="url(#g)"/><use href="#g"/>'))).toBe('image/svg+xml');
  });
});
