import type { ResourceDocs } from '../openapi/route-doc';
import { CreateCustomerDto, ListCustomersQueryDto, UpdateCustomerDto } from './customers.dto';

export const customersDocs: ResourceDocs = {
  routes: {
    'POST /v1/customers': { body: CreateCustomerDto, response: 'Customer', status: 201 },
    'GET /v1/customers': { query: ListCustomersQueryDto, response: 'Customer', list: true },
    'GET /v1/customers/:id': { response: 'Customer' },
    'PATCH /v1/customers/:id': { body: UpdateCustomerDto, response: 'Customer' },
    'DELETE /v1/customers/:id': { response: 'Customer' },
  },
  schemas: {
    Customer: {
      type: 'object',
      required: ['id', 'object', 'livemode', 'name', 'email', 'metadata', 'created', 'updated', 'deleted', 'deleted_at'],
      properties: {
        id: { type: 'string', example: 'cus_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
        object: { type: 'string', enum: ['customer'] },
        livemode: { type: 'boolean' },
        name: { type: 'string' },
        email: { type: 'string', format: 'email' },
        metadata: { type: 'object', additionalProperties: { type: 'string' } },
        created: { type: 'integer', description: 'Unix seconds.' },
        updated: { type: 'integer', description: 'Unix seconds.' },
        deleted: { type: 'boolean', description: 'True once the customer was (soft) deleted.' },
        deleted_at: { type: ['integer', 'null'], description: 'Unix seconds of the deletion, or null.' },
      },
    },
  },
};
