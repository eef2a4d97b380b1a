import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { paymentsV1, requireTenant } from '@recur/contracts';
import { checkListPage } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { Commands } from '../infrastructure/commands';
import { keepOutagesUnrecorded, unrecordedOutages } from '../payments/payments.grpc.controller';
import type { AutoRecharge } from './wallet';
import { toTopUpMessage, toTransactionMessage, toWalletMessage } from './wallet.mapper';
import { WalletsService } from './wallets.service';

/** gRPC edge of the wallet use cases: decode, call, encode. No rules live here. */
@Controller()
export class WalletsGrpcController {
  constructor(
    private readonly wallets: WalletsService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('PaymentsService', 'CreateWallet')
  createWallet(request: paymentsV1.CreateWalletRequest): Promise<paymentsV1.CreateWalletResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, paymentsV1.CreateWalletResponseSchema, async (tx) => ({
      wallet: toWalletMessage(await this.wallets.create(tx, tenant, {
        customerId: request.customerId, currency: request.currency, lowBalanceThreshold: fromInt64(request.lowBalanceThreshold, 'low_balance_threshold'),
      })),
    }));
  }

  @GrpcMethod('PaymentsService', 'GetWallet')
  async getWallet(request: paymentsV1.GetWalletRequest): Promise<MessageInitShape<typeof paymentsV1.GetWalletResponseSchema>> {
    return { wallet: toWalletMessage(await this.wallets.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('PaymentsService', 'ListWallets')
  async listWallets(request: paymentsV1.ListWalletsRequest): Promise<MessageInitShape<typeof paymentsV1.ListWalletsResponseSchema>> {
    const page = checkListPage(request.page);
    const { wallets, page: info } = await this.wallets.list(requireTenant(request.tenant), page, request.customerId);
    return { wallets: wallets.map(toWalletMessage), page: info };
  }

  @GrpcMethod('PaymentsService', 'UpdateWallet')
  updateWallet(request: paymentsV1.UpdateWalletRequest): Promise<paymentsV1.UpdateWalletResponse> {
    const tenant = requireTenant(request.tenant);
    const recharge = request.autoRecharge;
    const autoRecharge: AutoRecharge | undefined = recharge && {
      enabled: recharge.enabled,
      threshold: fromInt64(recharge.threshold, 'auto_recharge.threshold'),
      amount: fromInt64(recharge.amount, 'auto_recharge.amount'),
      phoneNumber: recharge.phoneNumber,
      provider: recharge.provider as AutoRecharge['provider'],
    };
    return this.commands.run(tenant, request, paymentsV1.UpdateWalletResponseSchema, async (tx) => ({
      wallet: toWalletMessage(await this.wallets.update(tx, tenant, request.id, {
        lowBalanceThreshold: request.lowBalanceThreshold === undefined ? undefined : fromInt64(request.lowBalanceThreshold, 'low_balance_threshold'),
        autoRecharge,
      })),
    }));
  }

  @GrpcMethod('PaymentsService', 'TopUpWallet')
  topUpWallet(request: paymentsV1.TopUpWalletRequest): Promise<paymentsV1.TopUpWalletResponse> {
    const tenant = requireTenant(request.tenant);
    return unrecordedOutages(() =>
      this.commands.run(tenant, request, paymentsV1.TopUpWalletResponseSchema, async (tx) => ({
        topUp: toTopUpMessage(await this.wallets.topUp(tx, tenant, request.id, fromInt64(request.amount, 'amount'), request.sellerName, request.requestId).catch(keepOutagesUnrecorded)),
      })),
    );
  }

  @GrpcMethod('PaymentsService', 'ListWalletTransactions')
  async listWalletTransactions(request: paymentsV1.ListWalletTransactionsRequest): Promise<MessageInitShape<typeof paymentsV1.ListWalletTransactionsResponseSchema>> {
    const page = checkListPage(request.page);
    const { transactions, page: info } = await this.wallets.listTransactions(requireTenant(request.tenant), request.walletId, page);
    return { transactions: transactions.map(toTransactionMessage), page: info };
  }
}
