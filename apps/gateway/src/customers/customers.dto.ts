import { CUSTOMER_EMAIL_MAX, CUSTOMER_NAME_MAX, EMAIL_PATTERN } from '@recur/vocabulary';
import { IsNotEmpty, IsObject, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';
import { METADATA_KEY_MAX, METADATA_MAX_KEYS, METADATA_VALUE_MAX } from '@recur/kernel';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';

/** Metadata: at most 50 string values; keys up to 40 characters, values up to 500. */
export const IsMetadata = () =>
  ValidateBy({
    name: 'isMetadata',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' && value !== null && !Array.isArray(value) &&
        Object.keys(value).length <= METADATA_MAX_KEYS &&
        Object.entries(value).every(([key, item]) => key.length >= 1 && key.length <= METADATA_KEY_MAX && typeof item === 'string' && item.length <= METADATA_VALUE_MAX),
      defaultMessage: () => `metadata must be an object of at most ${METADATA_MAX_KEYS} string values (keys up to ${METADATA_KEY_MAX} characters, values up to ${METADATA_VALUE_MAX})`,
    },
  });

export class CreateCustomerDto {
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(CUSTOMER_NAME_MAX)
  name!: string;

  @IsString({ message: 'email must be a string' })
  @IsNotEmpty({ message: 'email must not be empty' })
  @MaxLength(CUSTOMER_EMAIL_MAX)
  @Matches(EMAIL_PATTERN, { message: 'email must be a valid e-mail address' })
  email!: string;

  @Optional()
  @IsObject()
  @IsMetadata()
  metadata?: Record<string, string>;

  /** A sandbox test clock (`clock_…`) the customer lives on; its subscriptions follow the clock's time. */
  @Optional()
  @IsString({ message: 'test_clock must be a string' })
  @MaxLength(100)
  test_clock?: string;
}

export class UpdateCustomerDto {
  @Optional()
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(CUSTOMER_NAME_MAX)
  name?: string;

  @Optional()
  @IsString({ message: 'email must be a string' })
  @MaxLength(CUSTOMER_EMAIL_MAX)
  @Matches(EMAIL_PATTERN, { message: 'email must be a valid e-mail address' })
  email?: string;

  /** Merged into the existing pairs; a key set to "" is removed. */
  @Optional()
  @IsObject()
  @IsMetadata()
  metadata?: Record<string, string>;
}

export class ListCustomersQueryDto extends ListQueryDto {
  @Optional()
  @IsString()
  @MaxLength(CUSTOMER_EMAIL_MAX)
  email?: string;
}
