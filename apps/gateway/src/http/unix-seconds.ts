import { UNIX_SECONDS_MAX, UNIX_SECONDS_MIN } from '@recur/vocabulary';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { apply } from '../plans/plans.dto';

/** A field of unix seconds: an integer from UNIX_SECONDS_MIN to UNIX_SECONDS_MAX (9999-12-31). */
export const UnixSeconds = (field: string) =>
  apply(
    IsInt({ message: `${field} must be unix seconds (an integer)` }),
    Min(UNIX_SECONDS_MIN, { message: `${field} must be unix seconds` }),
    Max(UNIX_SECONDS_MAX, { message: `${field} must be at most ${UNIX_SECONDS_MAX} (9999-12-31)` }),
  );

/** Unix seconds in a query: plain decimal digits only become a number; anything else stays a string, which UnixSeconds refuses. */
export const QueryUnixSeconds = () => Transform(({ value }) => (typeof value === 'string' && /^[1-9][0-9]{0,11}$/.test(value) ? Number(value) : value));
