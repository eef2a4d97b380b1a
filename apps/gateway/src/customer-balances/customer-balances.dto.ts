import { AMOUNT_MAX } from '@recur/vocabulary';
import { IsDefined, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { Optional } from '../http/optional';
import { apply, Currency } from '../plans/plans.dto';

export class CreateBalanceTransactionDto {
  /** The change in minor units of `currency`, not 0 (invoicing refuses it); negative credits the customer (the next invoices consume it), positive takes credit back. */
  @IsDefined({ message: 'amount is required' })
  @(apply(
    IsInt({ message: 'amount must be an integer amount in minor units' }),
    Min(-AMOUNT_MAX, { message: `amount must be at least -${AMOUNT_MAX}` }),
    Max(AMOUNT_MAX, { message: `amount must be at most ${AMOUNT_MAX}` }),
  ))
  amount!: number;

  /** Lowercase ISO 4217: the customer's balance currency (its first adjustment or credit sets it). */
  @IsDefined({ message: 'currency is required' }) @Currency()
  currency!: string;

  @Optional() @IsString({ message: 'description must be a string' }) @MaxLength(500, { message: 'description must be at most 500 characters' })
  description?: string;
}
