import { PAYMENT_PROVIDER_CODES } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { JSONSchema } from 'class-validator-jsonschema';
import { IsBoolean, IsDefined, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';
import { Amount, Currency, OneOf } from '../plans/plans.dto';

export class CreateWalletDto {
  /** The wallet's customer (`cus_…`), of the same app. */
  @IsDefined({ message: 'customer is required' }) @IsString({ message: 'customer must be a string' }) @IsNotEmpty({ message: 'customer must not be empty' }) @MaxLength(64, { message: 'customer must be a customer id' })
  customer!: string;

  /** Lowercase ISO 4217. One wallet per customer and currency (a second answers 409 wallet_exists). */
  @IsDefined({ message: 'currency is required' }) @Currency()
  currency!: string;

  /** Falling from at least this balance to under it emits wallet.low_balance (minor units); 0 (default): never. */
  @Optional() @Amount('low_balance_threshold')
  low_balance_threshold?: number;
}

export class AutoRechargeDto {
  /** Turns automatic top-ups on or off. */
  @IsDefined({ message: 'auto_recharge.enabled is required' }) @IsBoolean({ message: 'auto_recharge.enabled must be a boolean' })
  enabled!: boolean;

  /** Falling from at least this balance to under it starts one automatic top-up (minor units; positive when enabled). */
  @Optional() @Amount('auto_recharge.threshold')
  threshold?: number;

  /** What one automatic top-up adds (minor units; positive when enabled). */
  @Optional() @Amount('auto_recharge.amount')
  amount?: number;

  /** The payer's mobile-money number in international format (`+260971000001`), checked as POST /v1/payments/initiate checks it. */
  @Optional() @IsString({ message: 'auto_recharge.phone_number must be a string' }) @MaxLength(32, { message: 'auto_recharge.phone_number must be at most 32 characters' })
  phone_number?: string;

  /** The mobile-money provider of the number, as pawaPay codes it (`MTN_MOMO_ZMB`). */
  @Optional() @OneOf('auto_recharge.provider', PAYMENT_PROVIDER_CODES)
  provider?: string;
}

export class UpdateWalletDto {
  /** Replaces the low-balance threshold (0: none). A new threshold is no crossing: nothing is emitted at once. */
  @Optional() @Amount('low_balance_threshold')
  low_balance_threshold?: number;

  /** Replaces the auto recharge setting as a whole. */
  @Optional()
  @IsObject({ message: 'auto_recharge must be an object' })
  @ValidateNested()
  @Type(() => AutoRechargeDto)
  @JSONSchema({ $ref: '#/components/schemas/AutoRechargeDto' })
  auto_recharge?: AutoRechargeDto;
}

export class TopUpWalletDto {
  /** What the wallet receives once the top-up invoice is paid (minor units, positive). */
  @IsDefined({ message: 'amount is required' }) @Amount('amount')
  amount!: number;
}

export class ListWalletsQueryDto extends ListQueryDto {
  /** Only this customer's wallets. */
  @IsOptional() @IsString() @MaxLength(64)
  customer?: string;
}
