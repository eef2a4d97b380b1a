import { PAYMENT_PROVIDER_CODES } from '@recur/vocabulary';
import { IsBoolean, IsDefined, IsString, MaxLength } from 'class-validator';
import { Optional } from '../http/optional';
import { OneOf } from '../plans/plans.dto';

export class CreatePaymentMethodDto {
  /** The payer's mobile-money number in international format (`+260971000001`), checked as POST /v1/payments/initiate checks it. */
  @IsDefined({ message: 'phone_number is required' }) @IsString({ message: 'phone_number must be a string' }) @MaxLength(32, { message: 'phone_number must be at most 32 characters' })
  phone_number!: string;

  /** The mobile-money provider of the number, as pawaPay codes it (`MTN_MOMO_ZMB`); predicted from the number when left out. */
  @Optional() @OneOf('provider', PAYMENT_PROVIDER_CODES)
  provider?: string;

  /** Must be `true`: the payer agreed that Recur may push payment prompts to this number (recorded with its time). */
  @IsDefined({ message: 'consent is required' }) @IsBoolean({ message: 'consent must be a boolean' })
  consent!: boolean;

  /** Makes it the customer's default; absent: default when the customer has none yet. */
  @Optional() @IsBoolean({ message: 'set_default must be a boolean' })
  set_default?: boolean;
}
