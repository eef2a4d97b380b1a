import { ADDON_STATUSES } from '@recur/vocabulary';
import { ListQueryDto } from '../http/list';
import { Amount, Currency, Description, Metadata, Name, OneOf, TaxRates } from '../plans/plans.dto';
import { Optional } from '../http/optional';

export class CreateAddonDto {
  @Name()
  name!: string;

  @Description()
  description?: string;

  /** The monthly price in minor units. */
  @Amount('price_monthly')
  price_monthly!: number;

  /** Lowercase ISO 4217; default usd. */
  @Optional() @Currency()
  currency?: string;

  @Metadata()
  metadata?: Record<string, string>;

  /** The tax rate (`txr_…`, active, at most one) the add-on's invoice lines carry; a subscription keeps the rates of when it was attached. */
  @TaxRates()
  tax_rates?: string[];
}

export class UpdateAddonDto {
  @Optional() @Name()
  name?: string;

  /** null or "" removes it. */
  @Description()
  description?: string | null;

  @Optional() @Amount('price_monthly')
  price_monthly?: number;

  @Optional() @Currency()
  currency?: string;

  /** Merged into the existing pairs; a key set to "" is removed. */
  @Metadata()
  metadata?: Record<string, string>;

  /** Replaces the add-on's tax rates (`[]` clears them); subscriptions attaching it later take them. */
  @TaxRates()
  tax_rates?: string[];
}

export class ListAddonsQueryDto extends ListQueryDto {
  @Optional() @OneOf('status', ADDON_STATUSES)
  status?: string;
}
