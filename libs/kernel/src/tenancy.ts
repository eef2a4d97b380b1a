/** The account and app a request acts for. Every row stores both; every query filters by both. */
export interface TenantRef {
  accountId: string;
  livemode: boolean;
}
