import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, failedPrecondition, newId, type Page, type TenantRef } from '@recur/kernel';
import { type Money, money, zero } from '@recur/money';
import type { OpenTransaction } from '@recur/persistence';
import { appliedBalance, billableCustomer, type CustomerLookup, type Invoice } from '../invoices/invoice';
import type { CreditNote } from '../credit-notes/credit-note';
import { adjustedBalance, type BalanceTransaction, checkBalanceDescription, creditedBalance, creditToReserve, creditToReturn } from './customer-balance';
import { balanceKey, CustomerBalancesRepository } from './customer-balances.repository';

/** Customers' balances (docs/api/customer-balance.md): manual adjustments, reads, and what finalization consumes. */
@Injectable()
export class CustomerBalancesService {
  constructor(
    private readonly balances: CustomerBalancesRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  /** A manual adjustment of an existing, undeleted customer's balance, under its lock. */
  async adjust(tx: OpenTransaction, tenant: TenantRef, customer: CustomerLookup, amount: { amountMinor: number; currency: string }, description: string): Promise<BalanceTransaction> {
    const { id: customerId } = billableCustomer(customer);
    const text = checkBalanceDescription(description);
    const now = this.now();
    const current = await this.balances.lockOne(tx, tenant, customerId, amount.currency.toLowerCase(), now);
    const endingBalance = adjustedBalance(current, amount);
    const entry: BalanceTransaction = {
      id: newId('cbtx'), tenant, customerId, type: 'adjustment', amount: money(amount.amountMinor, endingBalance.currency), endingBalance,
      description: text, invoiceId: null, creditNoteId: null, createdAt: now,
    };
    await this.balances.record(tx, [entry]);
    return entry;
  }

  /**
   * Locks the balance a paid invoice's credit note will credit (creating its row if none), before
   * the credit note takes its number: the lock order is the invoice, the balance, the number
   * counter, as at finalization (docs/api/customer-balance.md#concurrency).
   */
  lockForCreditNote(tx: OpenTransaction, invoice: Invoice): Promise<Money | null> {
    return this.balances.lockOne(tx, invoice.tenant, invoice.customer.id, invoice.currency, this.now());
  }

  /**
   * A paid invoice's credit note that moved no money credits its amount to the customer's
   * balance (`current`, as locked by lockForCreditNote): a `credit_note` entry naming it
   * (docs/api/credit-notes.md).
   */
  async recordCreditNote(tx: OpenTransaction, note: CreditNote, current: Money | null): Promise<BalanceTransaction> {
    const endingBalance = creditedBalance(current, note.amount);
    const entry: BalanceTransaction = {
      id: newId('cbtx'), tenant: note.tenant, customerId: note.customer.id, type: 'credit_note', amount: money(-note.amount.amountMinor, note.amount.currency), endingBalance,
      description: null, invoiceId: note.invoiceId, creditNoteId: note.id, createdAt: note.createdAt,
    };
    await this.balances.record(tx, [entry]);
    return entry;
  }

  /**
   * Takes a final invoice's credit out of its customer's balance for a refund to the payer of the
   * period's invoice (ReserveCreditRefund; docs/api/subscriptions.md#refunding-the-credit): at most
   * `max`, under the balance's lock, once per invoice (a repeat answers the first reservation).
   */
  async reserveCreditRefund(tx: OpenTransaction, invoice: Invoice, max: Money): Promise<Money> {
    if (!invoice.creditRefundInvoiceId || invoice.status !== 'paid' || invoice.total.amountMinor >= 0) {
      throw failedPrecondition('invoice_credit_not_refundable', `Invoice '${invoice.id}' holds no credit to refund: only a final invoice raised with refund_credit, finalized with a total below 0, does.`);
    }
    const now = this.now();
    const current = await this.balances.lockOne(tx, invoice.tenant, invoice.customer.id, invoice.currency, now);
    const earlier = await this.balances.creditRefundOf(tx, invoice.tenant, invoice.customer.id, invoice.id);
    if (earlier.reserved !== null) return money(earlier.reserved, invoice.currency);
    const reserved = creditToReserve(current, money(-invoice.total.amountMinor, invoice.currency), max);
    if (reserved === 0) return zero(invoice.currency);
    await this.balances.record(tx, [{
      id: newId('cbtx'), tenant: invoice.tenant, customerId: invoice.customer.id, type: 'refund', amount: money(reserved, invoice.currency),
      endingBalance: money(current!.amountMinor + reserved, invoice.currency), description: `Refunded to the payer of invoice ${invoice.creditRefundInvoiceId}`,
      invoiceId: invoice.id, creditNoteId: null, createdAt: now,
    }]);
    return money(reserved, invoice.currency);
  }

  /**
   * The refund of a reserved credit settled at `refunded` (0: it failed): the rest of the
   * reservation goes back to the balance, a `refund_reversal` entry (SettleCreditRefund). Safe to
   * repeat; answers what the balance got back in all.
   */
  async settleCreditRefund(tx: OpenTransaction, invoice: Invoice, refunded: Money): Promise<Money> {
    const now = this.now();
    const current = await this.balances.lockOne(tx, invoice.tenant, invoice.customer.id, invoice.currency, now);
    const { reserved, returned } = await this.balances.creditRefundOf(tx, invoice.tenant, invoice.customer.id, invoice.id);
    if (reserved === null) return zero(invoice.currency);
    if (refunded.currency !== invoice.currency) throw failedPrecondition('currency_mismatch', `refunded must be in ${invoice.currency}, the invoice's currency`);
    const back = creditToReturn(reserved, refunded.amountMinor, returned);
    if (back === 0) return money(returned, invoice.currency);
    await this.balances.record(tx, [{
      id: newId('cbtx'), tenant: invoice.tenant, customerId: invoice.customer.id, type: 'refund_reversal', amount: money(-back, invoice.currency),
      endingBalance: creditedBalance(current, money(back, invoice.currency)), description: `Not refunded to the payer of invoice ${invoice.creditRefundInvoiceId}: credited back`,
      invoiceId: invoice.id, creditNoteId: null, createdAt: now,
    }]);
    return money(returned + back, invoice.currency);
  }

  list(tenant: TenantRef, customerId: string, page: Page) {
    return this.balances.list(tenant, customerId, page);
  }

  balancesOf(tenant: TenantRef, customerIds: readonly string[]): Promise<(Money | null)[]> {
    return this.balances.balances(tenant, customerIds);
  }

  /**
   * Locks the balances of the customers these invoices bill, before they are finalized: the
   * finalizations read them from the answer (by balanceKey) and `recordConsumed` writes what they took.
   */
  async lockForFinalization(tx: OpenTransaction, invoices: readonly Invoice[]): Promise<Map<string, Money>> {
    // A negative total credits its customer: the balance row must exist to be locked before it is written.
    await this.balances.ensureRows(tx, invoices.filter((invoice) => consumesBalance(invoice) && invoice.amountDue.amountMinor < 0)
      .map((invoice) => ({ tenant: invoice.tenant, customerId: invoice.customer.id, currency: invoice.currency })), this.now());
    return this.balances.lockMany(tx, invoices.filter(consumesBalance).map((invoice) => ({ tenant: invoice.tenant, customerId: invoice.customer.id })));
  }

  /** The `applied_to_invoice` entries of finalized invoices that took credit (positive) or credited a negative total (negative), in their order. */
  async recordConsumed(tx: OpenTransaction, finalized: readonly Invoice[], now: Date): Promise<void> {
    await this.balances.record(tx, finalized.flatMap((invoice): BalanceTransaction[] => {
      const applied = appliedBalance(invoice);
      if (applied === 0) return [];
      return [{
        id: newId('cbtx'), tenant: invoice.tenant, customerId: invoice.customer.id, type: 'applied_to_invoice', amount: money(applied, invoice.currency),
        endingBalance: invoice.endingBalance, description: null, invoiceId: invoice.id, creditNoteId: null, createdAt: now,
      }];
    }));
  }
}

/** A wallet top-up buys prepaid money: it is paid in money, never from the balance (docs/api/customer-balance.md#invoices-consume-credit). */
export const consumesBalance = (invoice: Invoice): boolean => invoice.billingReason !== 'top_up';

export { balanceKey };
