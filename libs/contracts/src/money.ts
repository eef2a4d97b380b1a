import { create } from '@bufbuild/protobuf';
import { invalidArgument } from '@recur/kernel';
import { fromInt64, type Money, money, toInt64 } from '@recur/money';
import { type Money as MoneyMessage, MoneySchema } from './gen/recur/common/v1/money_pb';

/** Money onto the wire (recur.common.v1.Money). */
export function toMoneyMessage(amount: Money): MoneyMessage {
  return create(MoneySchema, { amountMinor: toInt64(amount.amountMinor), currency: amount.currency });
}

/**
 * A catalog price that a peer built before its Money field may leave out: the message when sent,
 * else the deprecated amount and currency, which every catalog release fills. So the gateway's
 * presenters read an older catalog too (docs/operations/upgrades.md#value-sets-belong-to-their-service).
 */
export function priceOrDeprecated(message: MoneyMessage | undefined, deprecated: { amountMinor: bigint; currency: string }, param: string): Money {
  return message === undefined ? money(fromInt64(deprecated.amountMinor, param), deprecated.currency) : moneyFromMessage(message, param);
}

/** Money off the wire: an exact integer amount in a known ISO 4217 currency, or an invalid `param`. */
export function moneyFromMessage(message: MoneyMessage | undefined, param = 'amount'): Money {
  if (message === undefined) throw invalidArgument(param, `${param} is required`, 'parameter_missing');
  return money(fromInt64(message.amountMinor, param), message.currency);
}
