#!/usr/bin/env node
// The `recur` command. This file exists before the build, so `npm ci` links it into
// node_modules/.bin; the CLI itself is src/main.ts, built to dist/.
require('../dist/main.js').main(process.argv.slice(2));
