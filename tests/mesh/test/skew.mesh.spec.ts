import { readFileSync } from 'node:fs';
import { type AppName, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { api, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';
import { expectEventsOf, runSmoke, SmokeFailure, type SmokeResources, type SmokeSize } from './skew-smoke';
import { ALL_NEW, APPS, type BuiltRelease, builtReleases, changesNaming, changesSince, type Combination, COMBINATIONS, servedByReleasedGateway } from './skew';

/**
 * Version skew (docs/operations/upgrades.md#version-skew-tested): the last release of each app
 * (releases/<app>.json, built in a scratch worktree and cached) runs beside this checkout's apps, as
 * a rolling upgrade has them: the old gateway with new services, the new gateway with old services,
 * and each service old while the others are new. The databases carry this checkout's migrations
 * (the mesh starts new, which applies them: the expand step) before any old app starts on them.
 * Each combination replaces the apps whose version differs from the one before (same ports,
 * databases and topics, so every combination also reads what the others wrote) and runs the smoke
 * of every resource through /v1 and the event flow. `npm test` runs the short smoke;
 * `npm run test:skew` (RECUR_SKEW=full) the whole one, after a control with every app new.
 */
const SIZE: SmokeSize = process.env.RECUR_SKEW === 'full' ? 'full' : 'short';
/** The release build's bound: a first build installs and builds a whole checkout (minutes on a busy machine). */
const RELEASE_BUILD_TIMEOUT_MS = 30 * 60_000;
const COMBINATION_TIMEOUT_MS = 6 * 60_000;

let releases: Record<AppName, BuiltRelease>;
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
/** What each combination's smoke created, read back once the rollout is done. */
const created: SmokeResources[] = [];
/** The version each app runs now. */
const running = Object.fromEntries(APPS.map((app) => [app, 'new'])) as Record<AppName, 'old' | 'new'>;

beforeAll(async () => {
  releases = await builtReleases();
}, RELEASE_BUILD_TIMEOUT_MS);

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Version skew'));
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

/** Moves each app to the version `combination` gives it: services side by side, then the gateway. */
async function arrange(combination: Combination): Promise<void> {
  const wanted = (app: AppName) => (combination.old.includes(app) ? 'old' : 'new');
  const moves = APPS.filter((app) => running[app] !== wanted(app));
  const move = async (app: AppName) => {
    await mesh.replace(app, wanted(app) === 'old' ? releases[app].root : undefined);
    running[app] = wanted(app);
  };
  await Promise.all(moves.filter((app) => app !== 'gateway').map(move));
  if (moves.includes('gateway')) await move('gateway');
  // Each process runs the build it should: an old app from the release's folder, a new one from this checkout.
  for (const app of APPS) {
    const script = readFileSync(`/proc/${mesh.apps[app].pid}/cmdline`, 'utf8').split('\0').find((arg) => arg.endsWith('main.js')) ?? '';
    expect({ app, old: script.startsWith(`${releases[app].root}/`) }).toEqual({ app, old: wanted(app) === 'old' });
  }
}

/** What a failing combination reports: the apps and versions, the failed call, the changes to look at, the old apps' errors. */
function explain(combination: Combination, error: unknown): Error {
  const old = combination.old.map((app) => `${app} ${releases[app].version} (${releases[app].commit.slice(0, 12)})`).join(', ');
  const commit = releases[combination.old[0] ?? 'gateway'].commit;
  const errors = combination.old
    .map((app) => [app, mesh.apps[app].output().split('\n').filter((line) => /"level":"(error|warn)"|Error/.test(line)).slice(-8)] as const)
    .filter(([, lines]) => lines.length > 0)
    .map(([app, lines]) => `${app} (old) logged:\n${lines.map((line) => `  ${line.slice(0, 400)}`).join('\n')}`);
  const what = error instanceof SmokeFailure ? error.message : (error as Error).stack ?? String(error);
  const route = error instanceof SmokeFailure ? error.route : undefined;
  return new Error(
    [
      `version skew: "${combination.name}" failed`,
      `  old: ${old}; every other app runs this checkout`,
      `  ${what}`,
      ...(route ? [`changes since the release that name ${route} (git log --grep):`, changesNaming(commit, route)] : []),
      `changes since the release between these apps (git log ${commit.slice(0, 12)}..HEAD):`,
      changesSince(commit, [...combination.old, 'gateway']),
      ...errors,
    ].join('\n'),
  );
}

describe(`version skew: the last releases beside this checkout (${SIZE} smoke)`, () => {
  const combinations = SIZE === 'full' ? [ALL_NEW, ...COMBINATIONS] : COMBINATIONS;
  it.each(combinations.map((combination) => [combination.name, combination] as const))('%s', async (_name, combination) => {
    try {
      await arrange(combination);
      const eventsApi = running.gateway === 'old' && !servedByReleasedGateway('/v1/events') ? 'absent' : running.gateway === 'new' && running['webhook-dispatch'] === 'old' ? 'unavailable' : 'works';
      const pageSave = running.gateway === 'new' && running.payments === 'new' ? 'saved' : 'paid';
      const creditNotesApi = running.gateway === 'old' && !servedByReleasedGateway('/v1/credit-notes') ? 'absent'
        : running.gateway === 'old' || running.payments === 'old' || running.invoicing === 'old' ? 'unavailable' : 'works';
      await runSmoke(mesh, keys.test, receiver, combination.name, SIZE, eventsApi, pageSave, creditNotesApi, (resources) => created.push(resources));
    } catch (error) {
      throw explain(combination, error);
    }
  }, COMBINATION_TIMEOUT_MS);

  // The rollout done: what the mixed meshes wrote reads back as if one version had written it all.
  it('every app new again: what each combination wrote reads back', async () => {
    await arrange(ALL_NEW);
    const call = api(mesh, keys.test);
    for (const resources of created) {
      try {
        expect((await call('GET', `/v1/customers/${resources.customer}`)).status).toBe(200);
        expect((await call('GET', `/v1/invoices/${resources.paidInvoice}`)).body.status).toMatch(/^(paid|refunded)$/);
        await expectEventsOf(call, resources.customer, 'customer.created');
      } catch (error) {
        const route = error instanceof SmokeFailure ? error.route : undefined;
        throw new Error(
          [
            `after the rollout, what "${resources.label}" wrote: ${(error as Error).message}`,
            ...(route ? [`changes since the release that name ${route} (git log --grep):`, changesNaming(releases.gateway.commit, route)] : []),
          ].join('\n'),
        );
      }
    }
  }, COMBINATION_TIMEOUT_MS);
});
