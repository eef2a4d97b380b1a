import { fromInt64 } from '@recur/money';
import type { CustomerBalanceTransaction } from '../gen/recur/invoicing/v1/invoicing_service_pb';
import { moneyFromMessage } from '../money';

/**
 * The public JSON of one entry of a customer's balance ledger (Stripe's customer balance
 * transaction): `amount` negative credits the customer (docs/api/customer-balance.md).
 */
export interface CustomerBalanceTransactionJson {
  id: string;
  object: 'customer_balance_transaction';
  livemode: boolean;
  customer: string;
  type: string;
  amount: number;
  currency: string;
  ending_balance: number;
  description: string | null;
  invoice: string | null;
  credit_note: string | null;
  created: number;
}

export function presentCustomerBalanceTransaction(transaction: CustomerBalanceTransaction): CustomerBalanceTransactionJson {
  const amount = moneyFromMessage(transaction.amount, 'amount');
  return {
    id: transaction.id,
    object: 'customer_balance_transaction',
    livemode: transaction.livemode,
    customer: transaction.customerId,
    type: transaction.type,
    amount: amount.amountMinor,
    currency: amount.currency,
    ending_balance: moneyFromMessage(transaction.endingBalance, 'ending_balance').amountMinor,
    description: transaction.description || null,
    invoice: transaction.invoiceId || null,
    credit_note: transaction.creditNoteId || null,
    created: fromInt64(transaction.created, 'created'),
  };
}
