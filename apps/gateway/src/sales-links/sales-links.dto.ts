import { BILLING_INTERVALS } from '@recur/pricing';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsString, IsUrl, Max, MaxLength, Min } from 'class-validator';
import { Optional } from '../http/optional';
import { CatalogValue } from '../plans/plans.dto';

/** What a link sells; docs/api/sales-links.md. */
export const SALES_LINK_KINDS = ['plan', 'one_time'] as const;

export class CreateSalesLinkDto {
  /** `plan`: a subscription to `plan_id` at `billing_interval`; `one_time`: one payment of that plan's price for one such period (no subscription). */
  @IsIn(SALES_LINK_KINDS, { message: `kind must be one of ${SALES_LINK_KINDS.join(', ')}` })
  kind!: string;

  /** The heading buyers see. */
  @IsString({ message: 'title must be a string' }) @IsNotEmpty({ message: 'title must not be empty' }) @MaxLength(200, { message: 'title must be at most 200 characters' })
  title!: string;

  @IsString({ message: 'plan_id must be a plan id' }) @IsNotEmpty({ message: 'plan_id must be a plan id' }) @MaxLength(100)
  plan_id!: string;

  @CatalogValue('billing_interval', BILLING_INTERVALS)
  billing_interval!: string;

  /** Every sale starts with this trial (no payment at checkout). Default 0; a `one_time` link takes none. */
  @Optional() @IsInt({ message: 'trial_days must be an integer' }) @Min(0, { message: 'trial_days must be from 0 to 730' }) @Max(730, { message: 'trial_days must be from 0 to 730' })
  trial_days?: number;

  /** Shows a promotion code field on the page. Default false; a `one_time` link takes none. */
  @Optional() @IsBoolean({ message: 'allow_promotion_codes must be a boolean' })
  allow_promotion_codes?: boolean;

  /** Where the buyer goes after paying (at once, for a trial); `{CHECKOUT_ID}` in it becomes the sale's id. */
  @Optional() @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true }, { message: 'success_url must be an http or https URL' }) @MaxLength(2000)
  success_url?: string;
}
