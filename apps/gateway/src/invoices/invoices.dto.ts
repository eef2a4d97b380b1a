import { COLLECTION_METHODS, DATE_PATTERN, INVOICE_CREATE_STATUSES, INVOICE_DESCRIPTION_MAX, INVOICE_LINES_MAX, INVOICE_STATUSES, isCalendarDate, QUANTITY_MAX } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { JSONSchema } from 'class-validator-jsonschema';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy, ValidateNested } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Amount, apply, Currency, Metadata, OneOf, TaxRates } from '../plans/plans.dto';

/** Text of an invoice or a line: 1–500 characters, not only blanks. */
const InvoiceText = (field: string) =>
  apply(
    IsString({ message: `${field} must be a string` }),
    Matches(/\S/, { message: `${field} must not be empty` }),
    MaxLength(INVOICE_DESCRIPTION_MAX, { message: `${field} must be at most ${INVOICE_DESCRIPTION_MAX} characters` }),
  );

/** A calendar day written YYYY-MM-DD (2026-02-30 is refused). */
const CalendarDate = (field: string) =>
  apply(
    Matches(DATE_PATTERN, { message: `${field} must be a date written YYYY-MM-DD` }),
    ValidateBy({ name: 'isCalendarDate', validator: { validate: (value: unknown) => typeof value === 'string' && isCalendarDate(value), defaultMessage: () => `${field} must be a real calendar date` } }),
  );

export class InvoiceLineDto {
  @InvoiceText('description')
  description!: string;

  /** The line's total in minor units of the invoice's currency. */
  @Amount('amount')
  amount!: number;

  /** Units the line bills, shown on the invoice; default 1. */
  @IsOptional() @IsInt({ message: 'quantity must be an integer' }) @Min(1, { message: 'quantity must be at least 1' }) @Max(QUANTITY_MAX, { message: `quantity must be at most ${QUANTITY_MAX}` })
  quantity?: number;

  /** The line's own tax rate (`txr_…`, at most one); without it the customer's country rate or the account default applies. */
  @TaxRates()
  tax_rates?: string[];
}

export class CreateInvoiceDto {
  /** The billed customer's id (`cus_…`), of the same app. */
  @IsString({ message: 'customer must be a string' }) @IsNotEmpty({ message: 'customer must not be empty' }) @MaxLength(64, { message: 'customer must be a customer id' })
  customer!: string;

  /** One line of this amount, described by `description` (give `amount` or `lines`). */
  @IsOptional() @Amount('amount')
  amount?: number;

  /** The invoice's memo; required with `amount`, where it is also the line's text. */
  @IsOptional() @InvoiceText('description')
  description?: string;

  /** The invoice's lines, 1–100 (instead of `amount`). */
  @IsOptional()
  @IsArray({ message: 'lines must be an array' })
  @ArrayMinSize(1, { message: 'lines must hold at least one line' })
  @ArrayMaxSize(INVOICE_LINES_MAX, { message: `lines may hold at most ${INVOICE_LINES_MAX} lines` })
  @ValidateNested({ each: true })
  @Type(() => InvoiceLineDto)
  @JSONSchema({ type: 'array', minItems: 1, maxItems: INVOICE_LINES_MAX, items: { $ref: '#/components/schemas/InvoiceLineDto' } })
  lines?: InvoiceLineDto[];

  /** Lowercase ISO 4217; default usd. */
  @IsOptional() @Currency()
  currency?: string;

  /** YYYY-MM-DD, today or later (UTC); default 30 days after creation. */
  @IsOptional() @CalendarDate('due_date')
  due_date?: string;

  /** `draft` (default) or `open`: finalized, numbered and raised at once. */
  @IsOptional() @OneOf('status', INVOICE_CREATE_STATUSES)
  status?: string;

  /** `send_invoice` (default): the payment link is sent; `charge_automatically`: at finalization the customer's wallet (if it covers it) or default payment method is charged. */
  @IsOptional() @OneOf('collection_method', COLLECTION_METHODS)
  collection_method?: string;

  @Metadata()
  metadata?: Record<string, string>;
}

export class ListInvoicesQueryDto extends ListQueryDto {
  @IsOptional() @IsString() @MaxLength(64)
  customer?: string;

  @IsOptional() @OneOf('status', INVOICE_STATUSES)
  status?: string;

  @IsOptional() @IsString() @MaxLength(64)
  subscription?: string;
}
