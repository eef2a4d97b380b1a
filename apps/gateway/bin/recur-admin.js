#!/usr/bin/env node
// The `recur-admin` command. This file exists before the build, so `npm ci` on a fresh clone
// links it into node_modules/.bin; the CLI itself is src/cli/recur-admin.ts, built to dist/.
require('../dist/cli/recur-admin.js').main(process.argv.slice(2));
