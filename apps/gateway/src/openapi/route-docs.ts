import { customersDocs } from '../customers/customers.openapi';
import { webhooksDocs } from '../webhooks/webhooks.openapi';
import { plansDocs } from '../plans/plans.openapi';
import { addonsDocs } from '../addons/addons.openapi';
import { couponsDocs } from '../coupons/coupons.openapi';
import { promotionCodesDocs } from '../promotion-codes/promotion-codes.openapi';
import type { ResourceDocs, RouteDoc } from './route-doc';

/** Every resource's documentation; a new resource adds its `<resource>.openapi.ts` here. */
const RESOURCES: ResourceDocs[] = [customersDocs, webhooksDocs, plansDocs, addonsDocs, couponsDocs, promotionCodesDocs];

export const ROUTE_DOCS: Record<string, RouteDoc> = Object.assign({}, ...RESOURCES.map((resource) => resource.routes));
export const RESOURCE_SCHEMAS: Record<string, object> = Object.assign({}, ...RESOURCES.map((resource) => resource.schemas));
