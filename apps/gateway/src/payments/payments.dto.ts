import { PAYMENT_PROVIDER_CODES } from '@recur/vocabulary';
import { IsDefined, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';
import { OneOf } from '../plans/plans.dto';

export class InitiatePaymentDto {
  /** The invoice to pay (`in_…`), open or failed, of the same app. */
  @IsDefined({ message: 'invoice_id is required' }) @IsString({ message: 'invoice_id must be a string' }) @IsNotEmpty({ message: 'invoice_id must not be empty' }) @MaxLength(64, { message: 'invoice_id must be an invoice id' })
  invoice_id!: string;

  /** The payer's mobile-money number in international format: `+260971000001` (checked with libphonenumber). */
  @IsDefined({ message: 'phone_number is required' }) @IsString({ message: 'phone_number must be a string' }) @IsNotEmpty({ message: 'phone_number must not be empty' }) @MaxLength(32, { message: 'phone_number must be at most 32 characters' })
  phone_number!: string;

  /**
   * The mobile-money provider, as pawaPay codes it (`MTN_MOMO_ZMB`); the number must be of its
   * country, and the provider must take the invoice's currency and amount. Optional: when left out,
   * the provider is predicted from the number (as pawaPay's predict-provider does).
   */
  @Optional() @OneOf('provider', PAYMENT_PROVIDER_CODES)
  provider?: string;
}

export class ListPaymentsQueryDto extends ListQueryDto {
  /** Only this invoice's payments. */
  @IsOptional() @IsString() @MaxLength(64)
  invoice?: string;
}
