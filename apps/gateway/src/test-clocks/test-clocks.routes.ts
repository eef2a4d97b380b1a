import { presentTestClock, type TestClockJson } from '@recur/contracts';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { AdvanceTestClockDto, CreateTestClockDto, ListTestClocksQueryDto } from './test-clocks.dto';

export const TEST_CLOCK_SCHEMA = responseSchema<TestClockJson>('TestClock', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'name', 'frozen_time', 'status', 'created', 'deleted'],
  properties: {
    id: { type: 'string', example: 'clock_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['test_clock'] },
    // Always false; no boolean enum: openapi-generator's Python client reads one as the string 'false'.
    livemode: { type: 'boolean', description: 'Always false: test clocks exist in the sandbox only.' },
    name: { type: 'string' },
    frozen_time: { type: 'integer', description: "The clock's time (unix seconds)." },
    status: { type: 'string', enum: ['ready', 'advancing'], description: '`advancing` until every move due by frozen_time has run.' },
    created: { type: 'integer', description: 'Unix seconds (real time).' },
    deleted: { type: 'boolean' },
  },
});

const present = (answer: { testClock?: Parameters<typeof presentTestClock>[0] }) => presentTestClock(answer.testClock!);

/** `/v1/test-clocks` (sandbox only; a live key gets 404) → SubscriptionService. */
export const TEST_CLOCK_ROUTES = defineRoutes('Test clocks', [
  route({
    method: 'POST', path: '/v1/test-clocks', summary: 'Create a test clock (sandbox)', body: CreateTestClockDto, response: TEST_CLOCK_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) =>
      present(await services.subscription.createTestClock({ tenant, frozenTime: BigInt(body.frozen_time), name: body.name ?? '', requestId: commandId })),
  }),
  listRoute({
    method: 'GET', path: '/v1/test-clocks', summary: 'List test clocks (sandbox)', query: ListTestClocksQueryDto, response: TEST_CLOCK_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { testClocks, page } = await services.subscription.listTestClocks({ tenant, page: pageRequest(query) });
      return listEnvelope('/v1/test-clocks', testClocks.map(presentTestClock), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/test-clocks/:id', summary: 'Retrieve a test clock (sandbox)', response: TEST_CLOCK_SCHEMA,
    handler: async ({ services, tenant, params }) => present(await services.subscription.getTestClock({ tenant, id: params.id })),
  }),
  route({
    method: 'POST', path: '/v1/test-clocks/:id/advance', summary: 'Advance a test clock (sandbox)', body: AdvanceTestClockDto, response: TEST_CLOCK_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      present(await services.subscription.advanceTestClock({ tenant, id: params.id, frozenTime: BigInt(body.frozen_time), requestId: commandId })),
  }),
  route({
    method: 'DELETE', path: '/v1/test-clocks/:id', summary: 'Delete a test clock (sandbox)', response: TEST_CLOCK_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => present(await services.subscription.deleteTestClock({ tenant, id: params.id, requestId: commandId })),
  }),
]);
