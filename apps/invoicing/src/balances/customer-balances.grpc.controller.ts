import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { invoicingV1, moneyFromMessage, requireTenant, toMoneyMessage } from '@recur/contracts';
import { checkListPage, invalidArgument } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { CustomerDirectory } from '../customers/customer-directory.client';
import { Commands } from '../infrastructure/commands';
import { InvoicesRepository } from '../invoices/invoices.repository';
import type { BalanceTransaction } from './customer-balance';
import { CustomerBalancesService } from './customer-balances.service';

/** The most customers one GetCustomerBalances asks (a list page is at most 100). */
const MAX_BALANCES_ASKED = 100;

const toTransactionMessage = (entry: BalanceTransaction): MessageInitShape<typeof invoicingV1.CustomerBalanceTransactionSchema> => ({
  id: entry.id,
  livemode: entry.tenant.livemode,
  customerId: entry.customerId,
  type: entry.type,
  amount: toMoneyMessage(entry.amount),
  endingBalance: toMoneyMessage(entry.endingBalance),
  description: entry.description ?? '',
  invoiceId: entry.invoiceId ?? '',
  creditNoteId: entry.creditNoteId ?? '',
  created: BigInt(Math.floor(entry.createdAt.getTime() / 1000)),
});

/** gRPC edge of customer balances: decode, look the customer up, call, encode. No rules live here. */
@Controller()
export class CustomerBalancesGrpcController {
  constructor(
    private readonly balances: CustomerBalancesService,
    private readonly customers: CustomerDirectory,
    private readonly commands: Commands,
    private readonly invoices: InvoicesRepository,
  ) {}

  @GrpcMethod('InvoicingService', 'ReserveCreditRefund')
  async reserveCreditRefund(request: invoicingV1.ReserveCreditRefundRequest): Promise<invoicingV1.ReserveCreditRefundResponse> {
    const tenant = requireTenant(request.tenant);
    const max = moneyFromMessage(request.maxAmount, 'max_amount');
    return this.commands.run(tenant, { requestId: '' }, invoicingV1.ReserveCreditRefundResponseSchema, async (tx) => ({
      reserved: toMoneyMessage(await this.balances.reserveCreditRefund(tx, await this.invoices.get(tenant, request.invoiceId, tx), max)),
    }));
  }

  @GrpcMethod('InvoicingService', 'SettleCreditRefund')
  async settleCreditRefund(request: invoicingV1.SettleCreditRefundRequest): Promise<invoicingV1.SettleCreditRefundResponse> {
    const tenant = requireTenant(request.tenant);
    const refunded = moneyFromMessage(request.refunded, 'refunded');
    return this.commands.run(tenant, { requestId: '' }, invoicingV1.SettleCreditRefundResponseSchema, async (tx) => ({
      returned: toMoneyMessage(await this.balances.settleCreditRefund(tx, await this.invoices.get(tenant, request.invoiceId, tx), refunded)),
    }));
  }

  @GrpcMethod('InvoicingService', 'CreateCustomerBalanceTransaction')
  async createCustomerBalanceTransaction(request: invoicingV1.CreateCustomerBalanceTransactionRequest): Promise<invoicingV1.CreateCustomerBalanceTransactionResponse> {
    const tenant = requireTenant(request.tenant);
    if (!request.amount) throw invalidArgument('amount', 'amount is required', 'parameter_missing');
    const amount = { amountMinor: fromInt64(request.amount.amountMinor, 'amount'), currency: request.amount.currency };
    const customer = await this.customers.lookup(tenant, request.customerId);
    return this.commands.run(tenant, request, invoicingV1.CreateCustomerBalanceTransactionResponseSchema, async (tx) => ({
      transaction: toTransactionMessage(await this.balances.adjust(tx, tenant, customer, amount, request.description)),
    }));
  }

  @GrpcMethod('InvoicingService', 'ListCustomerBalanceTransactions')
  async listCustomerBalanceTransactions(request: invoicingV1.ListCustomerBalanceTransactionsRequest): Promise<MessageInitShape<typeof invoicingV1.ListCustomerBalanceTransactionsResponseSchema>> {
    const page = checkListPage(request.page);
    const { transactions, page: info } = await this.balances.list(requireTenant(request.tenant), request.customerId, page);
    return { transactions: transactions.map(toTransactionMessage), page: info };
  }

  @GrpcMethod('InvoicingService', 'GetCustomerBalances')
  async getCustomerBalances(request: invoicingV1.GetCustomerBalancesRequest): Promise<MessageInitShape<typeof invoicingV1.GetCustomerBalancesResponseSchema>> {
    if (request.customerIds.length > MAX_BALANCES_ASKED) throw invalidArgument('customer_ids', `at most ${MAX_BALANCES_ASKED} customers at once`);
    const balances = await this.balances.balancesOf(requireTenant(request.tenant), request.customerIds);
    return { balances: request.customerIds.map((customerId, index) => ({ customerId, balance: balances[index] ? toMoneyMessage(balances[index]) : { amountMinor: 0n, currency: '' } })) };
  }
}
