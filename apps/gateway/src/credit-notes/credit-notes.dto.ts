import { CREDIT_NOTE_REASONS } from '@recur/vocabulary';
import { IsDefined, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { Optional } from '../http/optional';
import { Amount, Metadata, OneOf } from '../plans/plans.dto';

/** The longest memo (as invoicing's CREDIT_NOTE_MEMO_MAX). */
const MEMO_MAX = 500;

export class CreateCreditNoteDto {
  /** The finalized invoice to credit (`in_…`), of the same app. */
  @IsDefined({ message: 'invoice is required' }) @IsString({ message: 'invoice must be a string' }) @IsNotEmpty({ message: 'invoice must not be empty' }) @MaxLength(64, { message: 'invoice must be an invoice id' })
  invoice!: string;

  /** Why, as Stripe names it: `duplicate`, `fraudulent`, `order_change` or `product_unsatisfactory`. */
  @IsDefined({ message: 'reason is required' }) @OneOf('reason', CREDIT_NOTE_REASONS)
  reason!: string;

  /** How much to credit, in minor units of the invoice's currency; absent: all that can be credited. */
  @Optional() @Amount('amount')
  amount?: number;

  /** A note printed on the credit note. */
  @Optional() @IsString({ message: 'memo must be a string' }) @MaxLength(MEMO_MAX, { message: `memo must be at most ${MEMO_MAX} characters` })
  memo?: string;

  @Metadata()
  metadata?: Record<string, string>;
}
