import type { ClassConstructor } from 'class-transformer';

/** What the OpenAPI document says of a route beyond the route table: its body, query and answer. */
export interface RouteDoc {
  body?: ClassConstructor<object>;
  query?: ClassConstructor<object>;
  /** Name of the answer's schema (a key of the resource schemas). */
  response?: string;
  /** The answer is a list envelope of `response`. */
  list?: boolean;
  status?: number;
}

/** Each resource module documents its routes and answer schemas with one of these. */
export interface ResourceDocs {
  routes: Record<string, RouteDoc>;
  schemas: Record<string, object>;
}
