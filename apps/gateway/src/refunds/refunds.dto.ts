import { REFUND_REASONS } from '@recur/vocabulary';
import { IsDefined, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';
import { Amount, OneOf } from '../plans/plans.dto';

export class CreateRefundDto {
  /** The paid invoice to refund (`in_…`), of the same app. */
  @IsDefined({ message: 'invoice_id is required' }) @IsString({ message: 'invoice_id must be a string' }) @IsNotEmpty({ message: 'invoice_id must not be empty' }) @MaxLength(64, { message: 'invoice_id must be an invoice id' })
  invoice_id!: string;

  /** Why: `duplicate`, `fraudulent` or `requested_by_customer`. */
  @IsDefined({ message: 'reason is required' }) @OneOf('reason', REFUND_REASONS)
  reason!: string;

  /**
   * How much to refund, in minor units of the invoice's currency (a partial refund); absent: all
   * that was paid and is neither refunded nor being refunded.
   */
  @Optional() @Amount('amount')
  amount?: number;
}

export class ListRefundsQueryDto extends ListQueryDto {
  /** Only this invoice's credit notes. */
  @IsOptional() @IsString() @MaxLength(64)
  invoice?: string;

  /** Only this customer's credit notes. */
  @IsOptional() @IsString() @MaxLength(64)
  customer?: string;
}
