#!/usr/bin/env node
// Where a Node.js process spent its CPU: self time of a `--cpu-prof` profile, by package and by
// function, as shares of the time it was busy (idle shown apart).
//
//   node tools/bench/profile-summary.mjs <file.cpuprofile>… [--top N] [--window FROM-TO[,FROM-TO…]]
//
// `--window` keeps the samples taken between pairs of monotonic clock readings in microseconds
// (`process.hrtime.bigint() / 1000n` in any process of the machine: V8 stamps samples with the
// same clock), so a bench can summarise one phase of a long profile (several spans: its slices).
//
// Packages: npm packages by name (`@prisma/client`), workspace code as `@recur/<lib>` or
// `app:<name>` (its generated Prisma client as `app:<name> (prisma generated)`), Node's own
// JavaScript as `node:<module>`, WebAssembly as `wasm`, V8's buckets as `(garbage collector)`,
// `(program)` (native code outside JavaScript: syscalls, libuv, the parser), `(idle)`.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const TOP = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 20;
const windowIndex = args.indexOf('--window');
const WINDOW = windowIndex >= 0 ? args.splice(windowIndex, 2)[1].split(',').map((span) => span.split('-').map(Number)) : undefined;

export function packageOf(callFrame) {
  const { url, functionName } = callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  if (url.startsWith('wasm://')) return 'wasm';
  if (url.startsWith('node:')) return `node:${url.slice(5).replace(/^internal\//, '').split('/')[0]}`;
  const path = url.replace(/^file:\/\//, '');
  const nodeModules = path.lastIndexOf('/node_modules/');
  if (nodeModules >= 0) {
    const [first, second] = path.slice(nodeModules + 14).split('/');
    return first.startsWith('@') ? `${first}/${second}` : first;
  }
  const workspace = /\/(libs|apps)\/([^/]+)\/(.*)$/.exec(path);
  if (workspace) {
    const [, kind, name, rest] = workspace;
    if (kind === 'libs') return `@recur/${name}`;
    return rest.includes('/generated/prisma/') ? `app:${name} (prisma generated)` : `app:${name}`;
  }
  if (/\/tools\//.test(path)) return 'tools';
  return path;
}

/** Self time (ms) per profile node: each sample's interval is charged to the node it hit; `windows` (`[from, to]` spans) keep some. */
export function selfTimes(profile, windows = undefined) {
  const byId = new Map(profile.nodes.map((node) => [node.id, { node, ms: 0 }]));
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    const interval = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i]) / 1000;
    byId.get(profile.samples[i]).ms += interval;
  }
  return [...byId.values()];
}

/** The node's nearest ancestor (itself included) that `accept` takes, by package. */
function nearest(node, parents, accept) {
  for (let current = node; current; current = parents.get(current.id)) {
    const pkg = packageOf(current.callFrame);
    if (accept(pkg)) return pkg;
  }
  return undefined;
}

const isOpaque = (pkg) => pkg.startsWith('(') || pkg.startsWith('node:');

function summarise(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const times = selfTimes(profile, WINDOW);
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node);
  const total = times.reduce((sum, t) => sum + t.ms, 0);
  const idle = times.filter((t) => t.node.callFrame.functionName === '(idle)').reduce((sum, t) => sum + t.ms, 0);
  const busy = total - idle;
  const packages = new Map();
  const callers = new Map();
  const owners = new Map();
  const inclusive = new Map();
  const functions = new Map();
  const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms);
  for (const { node, ms } of times) {
    if (ms === 0 || node.callFrame.functionName === '(idle)') continue;
    const pkg = packageOf(node.callFrame);
    add(packages, pkg, ms);
    add(callers, isOpaque(pkg) ? nearest(node, parents, (p) => !isOpaque(p)) ?? pkg : pkg, ms);
    const onStack = new Set();
    for (let current = node; current; current = parents.get(current.id)) onStack.add(packageOf(current.callFrame));
    for (const pkg of onStack) add(inclusive, pkg, ms);
    add(owners, nearest(node, parents, (p) => p.startsWith('@recur/') || p.startsWith('app:')) ?? '(no workspace frame on the stack)', ms);
    const where = node.callFrame.url ? `${basename(node.callFrame.url)}:${node.callFrame.lineNumber + 1}` : '';
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where} [${pkg}]`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  }
  const share = (ms) => `${((100 * ms) / busy).toFixed(1).padStart(5)} %`;
  const rows = (map) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  console.log(`\n${basename(file)}: ${(total / 1000).toFixed(1)} s profiled, busy ${(busy / 1000).toFixed(1)} s (${((100 * busy) / total).toFixed(0)} %), idle ${(idle / 1000).toFixed(1)} s; shares of busy time`);
  console.log('  by package:');
  for (const [pkg, ms] of rows(packages)) console.log(`    ${share(ms)}  ${(ms / 1000).toFixed(2).padStart(7)} s  ${pkg}`);
  console.log('  by package, Node.js internals and native code charged to the package that called them:');
  for (const [pkg, ms] of rows(callers)) console.log(`    ${share(ms)}  ${(ms / 1000).toFixed(2).padStart(7)} s  ${pkg}`);
  console.log('  by the innermost workspace frame on the stack (whose code path it is):');
  for (const [pkg, ms] of rows(owners)) console.log(`    ${share(ms)}  ${(ms / 1000).toFixed(2).padStart(7)} s  ${pkg}`);
  console.log('  by package anywhere on the stack (inclusive: overlaps, does not sum to 100 %):');
  for (const [pkg, ms] of rows(inclusive)) console.log(`    ${share(ms)}  ${(ms / 1000).toFixed(2).padStart(7)} s  ${pkg}`);
  console.log('  by function:');
  for (const [name, ms] of rows(functions)) console.log(`    ${share(ms)}  ${name}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (args.length === 0) {
    console.error('usage: node tools/bench/profile-summary.mjs <file.cpuprofile>… [--top N]');
    process.exit(2);
  }
  for (const file of args) summarise(file);
}
