import { customersDocs } from '../customers/customers.openapi';
import { webhooksDocs } from '../webhooks/webhooks.openapi';
import type { ResourceDocs, RouteDoc } from './route-doc';

/** Every resource's documentation; a new resource adds its `<resource>.openapi.ts` here. */
const RESOURCES: ResourceDocs[] = [customersDocs, webhooksDocs];

export const ROUTE_DOCS: Record<string, RouteDoc> = Object.assign({}, ...RESOURCES.map((resource) => resource.routes));
export const RESOURCE_SCHEMAS: Record<string, object> = Object.assign({}, ...RESOURCES.map((resource) => resource.schemas));
