import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Safe retries of commands. A burst of deletes, updates and archives runs through the gateway
 * while the service that executes them is killed with SIGKILL and started again. The gateway's
 * gRPC client retries calls the crash cut off; a command that had already committed must answer
 * its first answer (the service's command_results), never a 409 as if it were a second delete.
 * Every request must end with the right success, and each change must have happened once.
 */
let mesh: Mesh;
let keys: Keys;
let accountId: string;

beforeAll(async () => {
  mesh = await startMesh();
  ({ accountId, keys } = await mesh.createAccount('Retries test'));
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await mesh?.stop();
}, 60_000);

type Answer = { request: string; status: number; body: any };

/**
 * Sends every request at once, kills `service` once a few have answered, restarts it, and returns
 * every answer. The burst is larger than the gateway admits at once (admission control): while
 * the admitted requests wait out the restart, the rest are refused with `503` and `Retry-After`
 * before anything is done (docs/operations/configuration.md#admission-control), and retried
 * after it as a client does. Any other answer is final: the gateway's own retries must absorb
 * the crash for every request it admitted.
 */
async function burstThroughCrash(service: 'subscription' | 'catalog', requests: { method: string; path: string; body?: unknown }[]): Promise<Answer[]> {
  const call = api(mesh, keys.test);
  let answered = 0;
  let refusedAtAdmission = 0;
  const running = Promise.all(
    requests.map(async ({ method, path, body }) => {
      for (let attempt = 1; ; attempt += 1) {
        const response = await call(method, path, body);
        const retryAfter = response.headers.get('retry-after');
        if (response.status === 503 && retryAfter !== null && attempt < 30) {
          refusedAtAdmission += 1;
          await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000));
          continue;
        }
        answered += 1;
        return { request: `${method} ${path}`, status: response.status, body: response.body };
      }
    }),
  );
  await eventually(async () => answered >= 3, 30_000, 'first answers');
  await mesh.apps[service].kill('SIGKILL');
  await mesh.apps[service].restart();
  const answers = await running;
  console.log(`retries test (${service}): ${answers.length} requests, ${answered} answered; statuses ${JSON.stringify(countBy(answers.map((answer) => answer.status)))}; ${refusedAtAdmission} refused at admission and retried`);
  return answers;
}

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

it('answers every delete and update of customers with its success across kill -9 of the subscription service, each change once', async () => {
  const call = api(mesh, keys.test);
  const customers: string[] = [];
  for (let i = 0; i < 80; i++) customers.push((await call('POST', '/v1/customers', { name: `Retry ${i}`, email: `retry${i}@example.com` })).body.id);
  const deleted = customers.slice(0, 40);
  const renamed = customers.slice(40);

  const answers = await burstThroughCrash('subscription', [
    ...deleted.map((id) => ({ method: 'DELETE', path: `/v1/customers/${id}` })),
    ...renamed.map((id) => ({ method: 'PATCH', path: `/v1/customers/${id}`, body: { name: `Renamed ${id}` } })),
  ]);
  for (const [index, id] of deleted.entries()) {
    expect({ request: answers[index].request, status: answers[index].status, id: answers[index].body?.id, deleted: answers[index].body?.deleted }).toEqual({ request: `DELETE /v1/customers/${id}`, status: 200, id, deleted: true });
  }
  for (const [index, id] of renamed.entries()) {
    const answer = answers[deleted.length + index];
    expect({ request: answer.request, status: answer.status, name: answer.body?.name }).toEqual({ request: `PATCH /v1/customers/${id}`, status: 200, name: `Renamed ${id}` });
  }

  // Each delete and each update happened once: one event each, whatever the retries.
  const events = async (type: string) => {
    const counts = new Map<string, number>();
    for (let offset = 0; ; offset += 100) {
      const { events: page, page: info } = await mesh.webhookDispatch.listEvents({ tenant: { accountId, livemode: false }, page: { limit: 100, offset }, type });
      for (const event of page) {
        const id = JSON.parse(event.dataJson).object.id as string;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      if (!info?.hasMore) return counts;
    }
  };
  const deletions = await eventually(async () => {
    const seen = await events('customer.deleted');
    return deleted.every((id) => seen.has(id)) ? seen : undefined;
  }, 60_000, 'a customer.deleted event for every deleted customer');
  expect(deleted.map((id) => deletions.get(id))).toEqual(deleted.map(() => 1));
  const updates = await eventually(async () => {
    const seen = await events('customer.updated');
    return renamed.every((id) => seen.has(id)) ? seen : undefined;
  }, 60_000, 'a customer.updated event for every renamed customer');
  expect(renamed.map((id) => updates.get(id))).toEqual(renamed.map(() => 1));
}, 240_000);

it('answers every plan archive and add-on change with its success across kill -9 of the catalog service', async () => {
  const call = api(mesh, keys.test);
  const plans: string[] = [];
  const addons: string[] = [];
  for (let i = 0; i < 40; i++) {
    plans.push((await call('POST', '/v1/plans', { name: `Plan ${i}`, pricing_model: 'flat_rate', amount_monthly: 1_000 })).body.id);
    addons.push((await call('POST', '/v1/addons', { name: `Add-on ${i}`, price_monthly: 100 })).body.id);
  }

  const answers = await burstThroughCrash('catalog', [
    ...plans.map((id) => ({ method: 'DELETE', path: `/v1/plans/${id}` })),
    ...addons.map((id) => ({ method: 'DELETE', path: `/v1/addons/${id}` })),
  ]);
  for (const [index, id] of plans.entries()) {
    expect({ request: answers[index].request, status: answers[index].status, plan: answers[index].body?.status }).toEqual({ request: `DELETE /v1/plans/${id}`, status: 200, plan: 'archived' });
  }
  for (const [index, id] of addons.entries()) {
    const answer = answers[plans.length + index];
    expect({ request: answer.request, status: answer.status, addon: answer.body?.status }).toEqual({ request: `DELETE /v1/addons/${id}`, status: 200, addon: 'off_sale' });
  }
  // The archive happened and sticks: a new archive (another request) is refused as a second one.
  expect((await call('DELETE', `/v1/plans/${plans[0]}`)).body.error.code).toBe('plan_archived');
}, 240_000);
