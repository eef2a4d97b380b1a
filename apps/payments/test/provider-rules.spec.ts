import { randomBytes } from 'node:crypto';
import { DomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { PAYMENT_PROVIDER_CODES, PAYMENT_PROVIDERS, predictProviderLocally, PROVIDER_RULES, providerDisplayName } from '@recur/vocabulary';
import { PawapayAdapter, rulesFromActiveConfiguration } from '../src/providers/pawapay.adapter';
import { ACTIVE_CONFIGURATION_TTL_MS, ProviderDirectory } from '../src/providers/provider-directory.service';
import { checkProviderAmount, minorUnits, predictLocally } from '../src/providers/provider-rules';
import { SandboxAdapter } from '../src/providers/sandbox.adapter';
import { FakePawapay } from './fake-pawapay';

const PARAMS = { amount: 'amount', currency: 'currency' };

/** The refusal `check` throws: its code and param, or null when it passes. */
function refusal(check: () => unknown): { code: string; param: string | undefined } | null {
  try {
    check();
    return null;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    expect(error.kind).toBe('invalid_argument');
    return { code: error.code, param: error.param };
  }
}

describe('provider rules (the documented table)', () => {
  it('names and describes every provider Recur offers, each in the country its numbers are of', () => {
    for (const code of PAYMENT_PROVIDER_CODES) {
      const rule = PROVIDER_RULES[code];
      expect(rule.displayName).not.toBe(code);
      expect(rule.country).toBe(code.slice(code.lastIndexOf('_') + 1));
      expect(rule.currencies.length).toBeGreaterThan(0);
      for (const currency of rule.currencies) expect(minorUnits(currency.minAmount, 2)!).toBeLessThan(minorUnits(currency.maxAmount, 2)!);
    }
    expect(providerDisplayName('MTN_MOMO_ZMB')).toBe('MTN MoMo Zambia');
    expect(providerDisplayName('NOT_A_PROVIDER')).toBe('NOT_A_PROVIDER');
  });

  it('takes an amount of the provider\'s currency within its limits', () => {
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_ZMB', money(12_345, 'zmw'), PARAMS))).toBeNull();
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_ZMB', money(100, 'zmw'), PARAMS))).toBeNull(); // the minimum itself, 1.00
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_ZMB', money(5_000_000, 'zmw'), PARAMS))).toBeNull(); // the maximum itself, 50 000.00
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'VODACOM_MPESA_COD', money(2_500, 'usd'), PARAMS))).toBeNull(); // DR Congo takes USD too
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_UGA', money(10_000, 'ugx'), PARAMS))).toBeNull(); // UGX has no minor unit
  });

  it('refuses a currency the provider does not hold: a USD invoice to MTN MoMo Zambia', () => {
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_ZMB', money(2_500, 'usd'), PARAMS))).toEqual({ code: 'currency_not_supported_by_provider', param: 'currency' });
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MPESA_KEN', money(2_500, 'zmw'), PARAMS))).toEqual({ code: 'currency_not_supported_by_provider', param: 'currency' });
  });

  it('refuses cents a provider that takes whole amounts cannot carry', () => {
    // KES has two decimals in ISO 4217, M-Pesa Kenya takes none: 100.50 KES cannot be sent, 100.00 can.
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MPESA_KEN', money(10_050, 'kes'), PARAMS))).toEqual({ code: 'amount_precision_not_supported', param: 'amount' });
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MPESA_KEN', money(10_000, 'kes'), PARAMS))).toBeNull();
  });

  it('refuses an amount below the minimum or above the maximum', () => {
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_ZMB', money(99, 'zmw'), PARAMS))).toEqual({ code: 'amount_below_provider_minimum', param: 'amount' });
    expect(refusal(() => checkProviderAmount(PROVIDER_RULES, 'MTN_MOMO_ZMB', money(5_000_001, 'zmw'), PARAMS))).toEqual({ code: 'amount_above_provider_maximum', param: 'amount' });
  });

  it('reads pawaPay\'s amounts in major units, trailing zeros or not', () => {
    expect(minorUnits('1', 2)).toBe(100);
    expect(minorUnits('0.1', 2)).toBe(10);
    expect(minorUnits('50000.00', 2)).toBe(5_000_000);
    expect(minorUnits('500', 0)).toBe(500);
    expect(minorUnits('1.5', 0)).toBeNull();
    expect(minorUnits('abc', 2)).toBeNull();
  });
});

describe('provider prediction from the phone number (local)', () => {
  it.each([
    ['+260 76 3456789', 'MTN_MOMO_ZMB'], // pawaPay's own example: +260 763-456789 → MTN_MOMO_ZMB
    ['+260961234567', 'MTN_MOMO_ZMB'],
    ['+260971234567', 'AIRTEL_OAPI_ZMB'],
    ['+260951234567', 'ZAMTEL_ZMB'],
    ['+254712345678', 'MPESA_KEN'], // the only Kenyan provider
    ['+256772345678', 'MTN_MOMO_UGA'],
    ['+256702345678', 'AIRTEL_OAPI_UGA'],
    ['+233241234567', 'MTN_MOMO_GHA'],
    ['+2348031234567', 'MTN_MOMO_NGA'],
    ['+2348021234567', 'AIRTEL_NGA'],
  ])('%s → %s', (number, provider) => {
    expect(predictLocally(number)).toBe(provider);
  });

  it('predicts nothing for a number of no offered provider, an invalid one, or a prefix no operator holds', () => {
    expect(predictLocally('+14155550100')).toBeNull();
    expect(predictLocally('+2601')).toBeNull();
    expect(predictLocally('not a number')).toBeNull();
    expect(predictProviderLocally('ZM', '211234567')).toBeNull(); // a Lusaka landline prefix
  });

  it('predicts, for every country, a provider of that country', () => {
    for (const code of PAYMENT_PROVIDER_CODES) {
      const prefix = code === 'MPESA_KEN' || code === 'MTN_MOMO_BEN' || code === 'VODACOM_MOZ' ? null : '';
      if (prefix === null) continue;
      const predicted = predictProviderLocally(PAYMENT_PROVIDERS[code], '000000000');
      if (predicted) expect(PAYMENT_PROVIDERS[predicted]).toBe(PAYMENT_PROVIDERS[code]);
    }
  });
});

describe('provider directory: pawaPay\'s active configuration and predict-provider in live mode', () => {
  const pawapay = new FakePawapay(`token-${randomBytes(6).toString('hex')}`);
  let now = new Date('2026-11-27T10:00:00Z');
  let directory: ProviderDirectory;
  const live = { accountId: 'acct_live', livemode: true };
  const sandbox = { accountId: 'acct_live', livemode: false };
  const toolkitCalls = () => pawapay.requests.filter((request) => request.path === '/v2/active-conf').length;

  beforeAll(async () => {
    await pawapay.start();
    const adapter = new PawapayAdapter({ baseUrl: pawapay.baseUrl, apiToken: pawapay.token, callbackPublicKey: pawapay.publicKeyPem, timeoutMs: 2_000 }, () => now);
    directory = new ProviderDirectory(adapter, () => now);
  });
  afterAll(() => pawapay.stop());

  it('reads the active configuration as pawaPay documents it', () => {
    const rules = rulesFromActiveConfiguration(pawapay.activeConf)!;
    expect(rules.MTN_MOMO_ZMB).toEqual(PROVIDER_RULES.MTN_MOMO_ZMB);
    expect(rulesFromActiveConfiguration({})).toBeNull();
  });

  it('checks live payments against pawaPay\'s limits, read once per cache period; the sandbox keeps the table', async () => {
    const zambia = pawapay.activeConf.countries.find((country) => country.country === 'ZMB')!;
    zambia.providers.find((provider) => provider.provider === 'MTN_MOMO_ZMB')!.currencies[0].operationTypes.DEPOSIT.maxAmount = '1000';
    await expect(directory.checkAmount(live, 'MTN_MOMO_ZMB', money(150_000, 'zmw'), PARAMS)).rejects.toMatchObject({ code: 'amount_above_provider_maximum' });
    await expect(directory.checkAmount(sandbox, 'MTN_MOMO_ZMB', money(150_000, 'zmw'), PARAMS)).resolves.toBeUndefined();
    await directory.checkAmount(live, 'MTN_MOMO_ZMB', money(100, 'zmw'), PARAMS);
    expect(toolkitCalls()).toBe(1);
    // pawaPay raises the limit; Recur sees it once the cached configuration is older than its TTL.
    zambia.providers.find((provider) => provider.provider === 'MTN_MOMO_ZMB')!.currencies[0].operationTypes.DEPOSIT.maxAmount = '50000';
    await expect(directory.checkAmount(live, 'MTN_MOMO_ZMB', money(150_000, 'zmw'), PARAMS)).rejects.toMatchObject({ code: 'amount_above_provider_maximum' });
    now = new Date(now.getTime() + ACTIVE_CONFIGURATION_TTL_MS);
    await expect(directory.checkAmount(live, 'MTN_MOMO_ZMB', money(150_000, 'zmw'), PARAMS)).resolves.toBeUndefined();
    expect(toolkitCalls()).toBe(2);
  });

  it('falls back to the last configuration read, else the documented table, when pawaPay cannot be reached', async () => {
    pawapay.toolkitDown = true;
    try {
      now = new Date(now.getTime() + ACTIVE_CONFIGURATION_TTL_MS);
      await expect(directory.checkAmount(live, 'MTN_MOMO_ZMB', money(2_500, 'usd'), PARAMS)).rejects.toMatchObject({ code: 'currency_not_supported_by_provider' });
      await expect(directory.checkAmount(live, 'MTN_MOMO_ZMB', money(150_000, 'zmw'), PARAMS)).resolves.toBeUndefined();
      const fresh = new ProviderDirectory(new PawapayAdapter({ baseUrl: pawapay.baseUrl, apiToken: pawapay.token, callbackPublicKey: '', timeoutMs: 2_000 }, () => now), () => now);
      expect(await fresh.rules(live)).toBe(PROVIDER_RULES);
    } finally {
      pawapay.toolkitDown = false;
    }
  });

  it('predicts with pawaPay\'s predict-provider live (a ported number), and by prefix when pawaPay is down or in the sandbox', async () => {
    pawapay.predictions.set('260971234567', 'MTN_MOMO_ZMB'); // an Airtel prefix, ported to MTN
    expect(await directory.predict(live, '+260971234567')).toBe('MTN_MOMO_ZMB');
    expect(pawapay.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v2/predict-provider', body: { phoneNumber: '260971234567' } });
    expect(await directory.predict(sandbox, '+260971234567')).toBe('AIRTEL_OAPI_ZMB');
    pawapay.toolkitDown = true;
    try {
      expect(await directory.predict(live, '+260971234567')).toBe('AIRTEL_OAPI_ZMB');
    } finally {
      pawapay.toolkitDown = false;
    }
  });

  it('resolves an explicit provider as given, an absent one by prediction, and refuses when none can be predicted', async () => {
    const offline = new ProviderDirectory(new SandboxAdapter('http://127.0.0.1:9'), () => now);
    expect(await offline.resolve(sandbox, 'ZAMTEL_ZMB', '+260971234567')).toBe('ZAMTEL_ZMB');
    expect(await offline.resolve(sandbox, '', '+260961234567')).toBe('MTN_MOMO_ZMB');
    await expect(offline.resolve(sandbox, '', '+14155550100')).rejects.toMatchObject({ code: 'provider_not_predictable', param: 'provider' });
    await expect(offline.resolve(sandbox, '', '0961234567')).rejects.toMatchObject({ code: 'parameter_invalid', param: 'phone_number' });
  });
});
