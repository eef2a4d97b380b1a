#!/usr/bin/env node
// The platform's tables (outbox, inbox, command results) belong to the libraries that use them:
// their DDL and migrations are in libs/<library>/migrations, applied to every service's database
// with a history of their own (docs/operations/upgrades.md#the-platforms-tables), and their Prisma
// models in libs/<library>/prisma/<library>.prisma. An app whose Prisma client needs such a model
// keeps a verbatim copy of its block in its schema.prisma:
//
//   node tools/db/platform-models.mjs           lists the copies that differ from the library's (exit 1 if any)
//   node tools/db/platform-models.mjs --write   rewrites them from the library's
//
// `npm run db:migration` leaves these models out of an app's diff, so an app's migrations never
// create or change a platform table; `npm run db:lint` runs the check.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The libraries that own tables: where their migrations and their Prisma models are. */
export const PLATFORM_LIBRARIES = [
  { library: 'messaging', migrationsDir: 'libs/messaging/migrations', models: 'libs/messaging/prisma/messaging.prisma' },
  { library: 'persistence', migrationsDir: 'libs/persistence/migrations', models: 'libs/persistence/prisma/persistence.prisma' },
];

const MODEL_BLOCK = /^model\s+(\w+)\s*\{[\s\S]*?^\}\n?/gm;

/** model name -> its block, as the owning libraries declare it. */
export function platformModels(root = ROOT) {
  const models = new Map();
  for (const { models: file } of PLATFORM_LIBRARIES) {
    for (const match of readFileSync(join(root, file), 'utf8').matchAll(MODEL_BLOCK)) models.set(match[1], match[0].replace(/\n?$/, '\n'));
  }
  return models;
}

/** The schema without the platform's models: what an app's own migrations are authored from. */
export function withoutPlatformModels(schema, models = platformModels()) {
  return schema.replace(MODEL_BLOCK, (block, name) => (models.has(name) ? '' : block));
}

/** [{ app, model }] for every platform model an app's schema copies with a different text. */
export function platformModelDrift(root = ROOT, models = platformModels(root)) {
  const drift = [];
  for (const app of readdirSync(join(root, 'apps'))) {
    const schemaPath = join(root, 'apps', app, 'prisma', 'schema.prisma');
    if (!existsSync(schemaPath)) continue;
    for (const match of readFileSync(schemaPath, 'utf8').matchAll(MODEL_BLOCK)) {
      const expected = models.get(match[1]);
      if (expected !== undefined && match[0].replace(/\n?$/, '\n') !== expected) drift.push({ app, model: match[1], schemaPath });
    }
  }
  return drift;
}

function main() {
  const models = platformModels();
  const drift = platformModelDrift(ROOT, models);
  if (process.argv.includes('--write')) {
    for (const schemaPath of new Set(drift.map((d) => d.schemaPath))) {
      const schema = readFileSync(schemaPath, 'utf8').replace(MODEL_BLOCK, (block, name) => (models.has(name) ? models.get(name) : block));
      writeFileSync(schemaPath, schema);
    }
    for (const { app, model } of drift) console.log(`rewrote ${model} in apps/${app}/prisma/schema.prisma`);
    return;
  }
  for (const { app, model } of drift) console.error(`apps/${app}/prisma/schema.prisma: model ${model} differs from its owning library's; run node tools/db/platform-models.mjs --write`);
  process.exit(drift.length ? 1 : 0);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
