import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@recur/testing';

/**
 * The documented `kubectl create secret` commands make the Secret the chart's pods read: every
 * key a container takes from a Secret (`secretKeyRef`, not optional) in the rendered manifests
 * of deploy/k8s/ is one of the command's `--from-literal` keys, in a Secret of that name. A key
 * missing there leaves the pods that need it failing to start (CreateContainerConfigError).
 */
interface SecretKeyRef {
  name: string;
  key: string;
  optional: boolean;
}

/** Every secretKeyRef of the rendered manifests (YAML as helm writes it: one field a line). */
function secretKeyRefs(): SecretKeyRef[] {
  const dir = join(REPO_ROOT, 'deploy', 'k8s');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(/^( *)secretKeyRef:\n((?:\1 +\S.*\n)+)/gm)].map(([, , fields]) => ({
        name: /^\s*name: "?([^"\s]+)"?$/m.exec(fields)![1],
        key: /^\s*key: "?([^"\s]+)"?$/m.exec(fields)![1],
        optional: /^\s*optional: true$/m.test(fields),
      })),
    );
}

/** The `kubectl … create secret generic <name> --from-literal=<key>=…` command of a Markdown page. */
function documentedSecret(page: string): { name: string; keys: string[] } {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const first = lines.findIndex((line) => /^kubectl .*create secret generic /.test(line));
  expect({ page, command: first >= 0 }).toEqual({ page, command: true });
  let last = first;
  while (lines[last].endsWith('\\')) last++;
  const command = lines.slice(first, last + 1).join('\n');
  return { name: /create secret generic (\S+)/.exec(command)![1], keys: [...command.matchAll(/--from-literal=([\w-]+)=/g)].map(([, key]) => key) };
}

const required = secretKeyRefs().filter((ref) => !ref.optional);

it('reads the Secret keys the rendered manifests need: each app’s database URL, the operator token, the SMTP URL', () => {
  const keys = new Set(required.map((ref) => ref.key));
  expect(keys).toEqual(new Set(['operator-token', 'smtp-url', ...['gateway', 'catalog', 'subscription', 'invoicing', 'payments', 'usage-metering', 'webhook-dispatch'].map((app) => `${app}-database-url`)]));
});

it.each(['deploy/k8s/README.md', 'helm/recur/README.md'])('%s creates every Secret key the pods need', (page) => {
  const secret = documentedSecret(page);
  const needed = required.filter((ref) => ref.name === secret.name).map((ref) => ref.key);
  expect(needed.length).toBe(required.length);
  expect(needed.filter((key) => !secret.keys.includes(key))).toEqual([]);
});
