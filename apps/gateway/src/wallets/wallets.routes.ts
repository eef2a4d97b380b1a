import { presentWallet, presentWalletTopUp, presentWalletTransaction, type WalletJson, type WalletTopUpJson, type WalletTransactionJson } from '@recur/contracts';
import { invalidArgument } from '@recur/kernel';
import { toInt64 } from '@recur/money';
import { PAYMENT_PROVIDER_CODES } from '@recur/vocabulary';
import { requireCustomer } from '../customers/require-customer';
import { ListQueryDto, listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateWalletDto, ListWalletsQueryDto, TopUpWalletDto, UpdateWalletDto } from './wallets.dto';

export const WALLET_SCHEMA = responseSchema<WalletJson>('Wallet', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'customer', 'currency', 'balance', 'low_balance_threshold', 'auto_recharge', 'created', 'updated'],
  properties: {
    id: { type: 'string', example: 'wal_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['wallet'] },
    livemode: { type: 'boolean' },
    customer: { type: 'string' },
    currency: { type: 'string', example: 'zmw' },
    balance: { type: 'integer', description: 'The sum of the ledger, in minor units of `currency`; never negative.' },
    low_balance_threshold: { type: 'integer', description: 'Falling from at least this to under it emits wallet.low_balance; 0: never.' },
    auto_recharge: {
      type: 'object',
      required: ['enabled', 'threshold', 'amount', 'phone_number', 'provider'],
      properties: {
        enabled: { type: 'boolean' },
        threshold: { type: 'integer', description: 'Falling from at least this to under it starts one automatic top-up.' },
        amount: { type: 'integer', description: 'What one automatic top-up adds.' },
        phone_number: { type: ['string', 'null'], example: '+260971000001' },
        provider: { type: ['string', 'null'], enum: [...PAYMENT_PROVIDER_CODES, null] },
      },
    },
    created: { type: 'integer', description: 'Unix seconds.' },
    updated: { type: 'integer', description: 'Unix seconds.' },
  },
});

export const WALLET_TOP_UP_SCHEMA = responseSchema<WalletTopUpJson>('WalletTopUp', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'wallet', 'invoice', 'amount', 'currency', 'status', 'automatic', 'payment_url', 'payment', 'created', 'credited_at'],
  properties: {
    id: { type: 'string', example: 'wtu_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['wallet_top_up'] },
    livemode: { type: 'boolean' },
    wallet: { type: 'string' },
    invoice: { type: ['string', 'null'], description: 'The top-up invoice (billing_reason top_up); paying it credits the wallet.' },
    amount: { type: 'integer' },
    currency: { type: 'string' },
    status: { type: 'string', enum: ['requested', 'pending', 'credited', 'failed'] },
    automatic: { type: 'boolean', description: 'True for a top-up auto recharge started.' },
    payment_url: { type: ['string', 'null'], description: "The invoice's hosted payment page." },
    payment: { type: ['string', 'null'], description: 'The payment auto recharge started.' },
    created: { type: 'integer', description: 'Unix seconds.' },
    credited_at: { type: ['integer', 'null'], description: 'Unix seconds; null until credited.' },
  },
});

export const WALLET_TRANSACTION_SCHEMA = responseSchema<WalletTransactionJson>('WalletTransaction', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'wallet', 'kind', 'amount', 'balance_after', 'currency', 'invoice', 'top_up', 'created'],
  properties: {
    id: { type: 'string', example: 'wtx_4f9XkQ2mZ8aBcD1eF3gH5jKl', description: "A debit's id is the `payment` of the invoice it paid." },
    object: { type: 'string', enum: ['wallet_transaction'] },
    livemode: { type: 'boolean' },
    wallet: { type: 'string' },
    kind: { type: 'string', enum: ['top_up', 'invoice_payment', 'refund'], description: 'top_up and refund (a wallet-paid invoice refunded) credit; invoice_payment debits.' },
    amount: { type: 'integer', description: 'Signed: credits positive, debits negative.' },
    balance_after: { type: 'integer' },
    currency: { type: 'string' },
    invoice: { type: ['string', 'null'] },
    top_up: { type: ['string', 'null'] },
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

/** `/v1/wallets` → PaymentsService (prepaid wallets, docs/api/wallets.md). Validation happened before; rules live in the service. */
export const WALLET_ROUTES = defineRoutes('Wallets', [
  route({
    method: 'POST', path: '/v1/wallets', summary: 'Create a prepaid wallet', body: CreateWalletDto, response: WALLET_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      // The customer must exist in the caller's app before a wallet is opened for it.
      await requireCustomer(services, tenant, body.customer, () => invalidArgument('customer', `No such customer: '${body.customer}'`, 'resource_missing'));
      const { wallet } = await services.payments.createWallet({
        tenant, customerId: body.customer, currency: body.currency, lowBalanceThreshold: toInt64(body.low_balance_threshold ?? 0, 'low_balance_threshold'), requestId: commandId,
      });
      return presentWallet(wallet!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/wallets', summary: 'List prepaid wallets', query: ListWalletsQueryDto, response: WALLET_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { wallets, page } = await services.payments.listWallets({ tenant, page: pageRequest(query), customerId: query.customer });
      return listEnvelope('/v1/wallets', wallets.map(presentWallet), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/wallets/:id', summary: 'Retrieve a prepaid wallet', response: WALLET_SCHEMA,
    handler: async ({ services, tenant, params }) => presentWallet((await services.payments.getWallet({ tenant, id: params.id })).wallet!),
  }),
  route({
    method: 'PATCH', path: '/v1/wallets/:id', summary: "Update a wallet's low-balance threshold and auto recharge", body: UpdateWalletDto, response: WALLET_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const recharge = body.auto_recharge;
      const { wallet } = await services.payments.updateWallet({
        tenant,
        id: params.id,
        lowBalanceThreshold: body.low_balance_threshold === undefined ? undefined : toInt64(body.low_balance_threshold, 'low_balance_threshold'),
        autoRecharge: recharge && {
          enabled: recharge.enabled,
          threshold: toInt64(recharge.threshold ?? 0, 'auto_recharge.threshold'),
          amount: toInt64(recharge.amount ?? 0, 'auto_recharge.amount'),
          phoneNumber: recharge.phone_number ?? '',
          provider: recharge.provider ?? '',
        },
        requestId: commandId,
      });
      return presentWallet(wallet!);
    },
  }),
  route({
    method: 'POST', path: '/v1/wallets/:id/top-ups', summary: 'Top up a wallet: raises an invoice to pay', body: TopUpWalletDto, response: WALLET_TOP_UP_SCHEMA, status: 201,
    handler: async ({ services, tenant, accountName, commandId, params, body }) => {
      const { topUp } = await services.payments.topUpWallet({ tenant, id: params.id, amount: toInt64(body.amount, 'amount'), sellerName: accountName, requestId: commandId });
      return presentWalletTopUp(topUp!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/wallets/:id/transactions', summary: "List a wallet's ledger", query: ListQueryDto, response: WALLET_TRANSACTION_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      const { transactions, page } = await services.payments.listWalletTransactions({ tenant, walletId: params.id, page: pageRequest(query) });
      return listEnvelope(`/v1/wallets/${params.id}/transactions`, transactions.map(presentWalletTransaction), query, page);
    },
  }),
]);
