import { checkTaxId, TAX_ID_TYPES } from '../src';

const valueOf = (type: string, value: string) => {
  const check = checkTaxId(type, value);
  return check.ok ? check.value : check.reason;
};

describe('tax ids', () => {
  it('use Stripe\'s type names for the countries served, plus EU VAT, and refuse any other type', () => {
    expect(TAX_ID_TYPES).toEqual(expect.arrayContaining(['eu_vat', 'ke_pin', 'ng_tin', 'sn_ninea', 'zm_tin', 'za_vat']));
    for (const type of ['vat', 'EU_VAT', 'gh_tin', 'us_ein', '']) expect(checkTaxId(type, 'X1')).toMatchObject({ ok: false, part: 'type', reason: 'unknown_type' });
  });

  it('eu_vat: a member state prefix and its country\'s shape, written upper case without spaces, dots or dashes', () => {
    const good: [string, string][] = [
      ['DE123456789', 'DE123456789'], ['fr ab 123456789', 'FRAB123456789'], ['ATU12345678', 'ATU12345678'], ['BE0123456789', 'BE0123456789'],
      ['NL123456789B01', 'NL123456789B01'], ['EL123456789', 'EL123456789'], ['IE1234567WA', 'IE1234567WA'], ['es-X1234567-Z', 'ESX1234567Z'],
      ['XIGD123', 'XIGD123'], ['SE123456789012', 'SE123456789012'], ['CY12345678L', 'CY12345678L'],
    ];
    for (const [typed, stored] of good) expect(valueOf('eu_vat', typed)).toBe(stored);
    const bad: [string, string][] = [
      ['GB123456789', 'eu_vat_country'], ['US123456789', 'eu_vat_country'], ['123456789', 'eu_vat_country'], ['GR123456789', 'eu_vat_country'],
      ['DE12345678', 'eu_vat_shape'], ['DE1234567890', 'eu_vat_shape'], ['ATX12345678', 'eu_vat_shape'], ['BE2123456789', 'eu_vat_shape'],
      ['NL123456789C01', 'eu_vat_shape'], ['FRIO123456789', 'eu_vat_shape'], ['DE', 'eu_vat_shape'], ['  ', 'empty'],
    ];
    for (const [typed, reason] of bad) expect([typed, valueOf('eu_vat', typed)]).toEqual([typed, reason]);
  });

  it('ke_pin: a letter, nine digits, a letter', () => {
    expect(valueOf('ke_pin', 'P051234567X')).toBe('P051234567X');
    expect(valueOf('ke_pin', 'a 000111111 b')).toBe('A000111111B');
    for (const typed of ['P05123456X', 'P0512345678X', '1051234567X', 'P0512345678', 'PP51234567X']) expect([typed, valueOf('ke_pin', typed)]).toEqual([typed, 'ke_pin_shape']);
  });

  it('the other types: kept as typed (trimmed), not empty, at most 64 characters, otherwise unchecked', () => {
    for (const type of TAX_ID_TYPES.filter((type) => type !== 'eu_vat' && type !== 'ke_pin')) {
      expect(valueOf(type, ' 0012345 2G3 ')).toBe('0012345 2G3');
      expect(valueOf(type, 'x'.repeat(64))).toBe('x'.repeat(64));
      expect(valueOf(type, 'x'.repeat(65))).toBe('too_long');
      expect(checkTaxId(type, '')).toMatchObject({ ok: false, part: 'value', reason: 'empty' });
    }
  });
});
