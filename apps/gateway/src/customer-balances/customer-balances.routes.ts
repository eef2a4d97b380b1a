import * as grpc from '@grpc/grpc-js';
import { type commonV1, type CustomerBalanceTransactionJson, moneyFromMessage, presentCustomerBalanceTransaction } from '@recur/contracts';
import { ListQueryDto, listEnvelope, pageRequest } from '../http/list';
import type { ServiceClients } from '../infrastructure/service-clients';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateBalanceTransactionDto } from './customer-balances.dto';

export const BALANCE_TRANSACTION_SCHEMA = responseSchema<CustomerBalanceTransactionJson>('CustomerBalanceTransaction', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'customer', 'type', 'amount', 'currency', 'ending_balance', 'description', 'invoice', 'credit_note', 'created'],
  properties: {
    id: { type: 'string', example: 'cbtx_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['customer_balance_transaction'] },
    livemode: { type: 'boolean' },
    customer: { type: 'string' },
    type: {
      type: 'string', enum: ['adjustment', 'applied_to_invoice', 'credit_note', 'refund', 'refund_reversal'],
      description: '`adjustment`: by hand; `applied_to_invoice`: an invoice consumed credit at finalization (positive), or a negative final invoice credited its total (negative); `credit_note`: a credit note credited a paid invoice; `refund`: a final invoice\'s credit refunded to the payer of the period\'s invoice (positive; a cancellation with `refund: true`); `refund_reversal`: that refund failed, its credit is back (negative).',
    },
    amount: { type: 'integer', description: 'The change in minor units; negative credits the customer.' },
    currency: { type: 'string', example: 'zmw' },
    ending_balance: { type: 'integer', description: 'The balance after this change (negative: credit).' },
    description: { type: ['string', 'null'] },
    invoice: { type: ['string', 'null'], description: 'The invoice that consumed the credit, or whose negative total credited it (`applied_to_invoice`), or whose credit was refunded (`refund`, `refund_reversal`).' },
    credit_note: { type: ['string', 'null'] },
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

/** A customer's balance as the customer object shows it: negative is credit (docs/api/customer-balance.md). */
export interface CustomerBalanceFields {
  balance: number;
  /** The balance's currency; null until the customer has had one. */
  currency: string | null;
}

const NO_BALANCE: CustomerBalanceFields = { balance: 0, currency: null };

/**
 * The balances of customers the gateway is about to answer, asked of invoicing in one call
 * (one per page of a list). An invoicing release without balances (UNIMPLEMENTED, during a
 * rolling upgrade) has none to tell: every customer reads 0.
 */
export async function balancesOf(services: ServiceClients, tenant: commonV1.Tenant, customerIds: readonly string[]): Promise<CustomerBalanceFields[]> {
  if (customerIds.length === 0) return [];
  try {
    const { balances } = await services.invoicing.getCustomerBalances({ tenant, customerIds: [...customerIds] });
    return customerIds.map((_, index) => {
      const balance = balances[index]?.balance;
      return !balance || !balance.currency ? NO_BALANCE : { balance: moneyFromMessage(balance, 'balance').amountMinor, currency: balance.currency };
    });
  } catch (error) {
    if ((error as grpc.ServiceError).code === grpc.status.UNIMPLEMENTED) return customerIds.map(() => NO_BALANCE);
    throw error;
  }
}

/** `/v1/customers/:id/balance-transactions` → InvoicingService, which keeps the ledger (docs/api/customer-balance.md). */
export const CUSTOMER_BALANCE_ROUTES = defineRoutes('Customer balance', [
  listRoute({
    method: 'GET', path: '/v1/customers/:id/balance-transactions', summary: "List a customer's balance transactions", query: ListQueryDto, response: BALANCE_TRANSACTION_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      // The customer must exist (404 otherwise), as for every sub-resource of a customer.
      await services.subscription.getCustomer({ tenant, id: params.id });
      const { transactions, page } = await services.invoicing.listCustomerBalanceTransactions({ tenant, customerId: params.id, page: pageRequest(query) });
      return listEnvelope(`/v1/customers/${params.id}/balance-transactions`, transactions.map(presentCustomerBalanceTransaction), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/customers/:id/balance-transactions', summary: "Adjust a customer's balance", body: CreateBalanceTransactionDto, response: BALANCE_TRANSACTION_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { transaction } = await services.invoicing.createCustomerBalanceTransaction({
        tenant, customerId: params.id, amount: { amountMinor: BigInt(body.amount), currency: body.currency }, description: body.description ?? '', requestId: commandId,
      });
      return presentCustomerBalanceTransaction(transaction!);
    },
  }),
]);
