#!/usr/bin/env node
// The chart's default CPU and memory requests and HPA targets, derived from the capacity table
// (helm/recur/capacity.json, written by `npm run bench:capacity`) by one rule
// (docs/operations/capacity.md#from-the-table-to-the-chart):
//
//   node tools/helm/capacity-values.mjs --check   # exit 1 when helm/recur/values.yaml disagrees
//   node tools/helm/capacity-values.mjs --write   # rewrite values.yaml's derived lines
//
// The derived lines are, under each apps.<app> of values.yaml:
//     resources: {requests: {cpu: …m, memory: …Mi}, limits: {memory: …Mi}}
//   and, under its autoscaling:
//       targetCPUUtilizationPercentage: …
// They are read and written as these lines (the repository has no YAML library of its own);
// a line missing or written otherwise fails the check.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CAPACITY_FILE = join(ROOT, 'helm', 'recur', 'capacity.json');
export const VALUES_FILE = join(ROOT, 'helm', 'recur', 'values.yaml');

/** The seven apps of the chart (apps.<app> in values.yaml). */
export const CHART_APPS = ['gateway', 'catalog', 'subscription', 'invoicing', 'payments', 'usage-metering', 'webhook-dispatch'];

/**
 * The rule. The chart is sized for DESIGN_LOAD requests a second of the benchmark's mix, spread
 * over `replicas` replicas of every app (defaults.replicaCount). At that load a replica uses its
 * CPU at rest plus its share of the requests times its CPU per mix request; its CPU request is
 * that divided by the HPA's target utilization, so at the design load each replica sits at the
 * target and more load adds replicas. Memory: the peak RSS under load plus a quarter, the limit
 * twice the request (a leak restarts the pod, not the node).
 */
export const RULE = {
  designLoad: { requestsPerSecond: 100, replicas: 2 },
  targetCPUUtilizationPercentage: 70,
  // Deliveries mostly wait on receivers, so CPU understates a dispatcher's backlog: it scales earlier.
  targetOverrides: { 'webhook-dispatch': 50 },
  memoryHeadroom: 1.25,
  memoryLimitFactor: 2,
  cpuStepMillicores: 10,
  minCpuMillicores: 20,
  memoryStepMiB: 32,
};

const roundUp = (value, step) => Math.ceil(value / step) * step;

/** Per chart app: { cpu: '130m', memory: '352Mi', memoryLimit: '704Mi', targetCPUUtilizationPercentage, busyMillicores }. */
export function deriveChartValues(capacity, rule = RULE) {
  const perReplica = rule.designLoad.requestsPerSecond / rule.designLoad.replicas;
  const derived = {};
  for (const app of CHART_APPS) {
    const measured = capacity.processes[app];
    if (!measured) throw new Error(`${CAPACITY_FILE} has no figures for ${app}: run npm run bench:capacity`);
    const target = rule.targetOverrides[app] ?? rule.targetCPUUtilizationPercentage;
    // CPU milliseconds a second are millicores.
    const busyMillicores = measured.restMsPerSecond + (perReplica * measured.cpuUsPerRequest.mix) / 1000;
    const cpu = Math.max(rule.minCpuMillicores, roundUp(busyMillicores / (target / 100), rule.cpuStepMillicores));
    const memory = roundUp(measured.peakRssMiB * rule.memoryHeadroom, rule.memoryStepMiB);
    derived[app] = { cpu: `${cpu}m`, memory: `${memory}Mi`, memoryLimit: `${memory * rule.memoryLimitFactor}Mi`, targetCPUUtilizationPercentage: target, busyMillicores };
  }
  return derived;
}

/** The lines of apps.<app>'s block in values.yaml: [first, end) indexes. */
function appBlock(lines, app) {
  const appsAt = lines.indexOf('apps:');
  if (appsAt < 0) throw new Error('values.yaml has no top-level apps:');
  const first = lines.findIndex((line, index) => index > appsAt && line === `  ${app}:`);
  if (first < 0) return undefined;
  let end = first + 1;
  while (end < lines.length && (lines[end] === '' || /^\s*#/.test(lines[end]) || lines[end].startsWith('    '))) end++;
  return [first, end];
}

const RESOURCES_LINE = /^ {4}resources: \{requests: \{cpu: (\S+), memory: (\S+)\}, limits: \{memory: (\S+)\}\}$/;
const TARGET_LINE = /^ {6}targetCPUUtilizationPercentage: (\d+)$/;

/** Index of the target line inside apps.<app>.autoscaling, or -1. */
function targetLineIndex(lines, [first, end]) {
  const autoscaling = lines.findIndex((line, index) => index > first && index < end && line === '    autoscaling:');
  if (autoscaling < 0) return -1;
  for (let index = autoscaling + 1; index < end && (lines[index].startsWith('      ') || /^\s*#/.test(lines[index])); index++) {
    if (TARGET_LINE.test(lines[index])) return index;
  }
  return -1;
}

/** What values.yaml says for each app: { cpu, memory, memoryLimit, targetCPUUtilizationPercentage } (undefined where a line is missing). */
export function readChartValues(valuesText) {
  const lines = valuesText.split('\n');
  const found = {};
  for (const app of CHART_APPS) {
    const block = appBlock(lines, app);
    if (!block) continue;
    const resources = lines.slice(...block).map((line) => RESOURCES_LINE.exec(line)).find(Boolean);
    const targetAt = targetLineIndex(lines, block);
    found[app] = {
      cpu: resources?.[1],
      memory: resources?.[2],
      memoryLimit: resources?.[3],
      targetCPUUtilizationPercentage: targetAt < 0 ? undefined : Number(TARGET_LINE.exec(lines[targetAt])[1]),
    };
  }
  return found;
}

/** Every disagreement of values.yaml with the capacity file: `apps.<app>.<field>: values.yaml says X, the capacity table gives Y`. */
export function disagreements(valuesText, capacity, rule = RULE) {
  const derived = deriveChartValues(capacity, rule);
  const found = readChartValues(valuesText);
  const problems = [];
  const paths = { cpu: 'resources.requests.cpu', memory: 'resources.requests.memory', memoryLimit: 'resources.limits.memory', targetCPUUtilizationPercentage: 'autoscaling.targetCPUUtilizationPercentage' };
  for (const app of CHART_APPS) {
    for (const [field, path] of Object.entries(paths)) {
      const said = found[app]?.[field];
      if (said !== derived[app][field]) problems.push(`apps.${app}.${path}: values.yaml says ${said ?? '(no such line)'}, the capacity table gives ${derived[app][field]}`);
    }
  }
  return problems;
}

/** values.yaml with every derived line set from the capacity file; throws where an app lacks a line to set. */
export function writeChartValues(valuesText, capacity, rule = RULE) {
  const derived = deriveChartValues(capacity, rule);
  const lines = valuesText.split('\n');
  for (const app of CHART_APPS) {
    const block = appBlock(lines, app);
    if (!block) throw new Error(`values.yaml has no apps.${app}`);
    const { cpu, memory, memoryLimit, targetCPUUtilizationPercentage } = derived[app];
    const resourcesAt = lines.findIndex((line, index) => index >= block[0] && index < block[1] && RESOURCES_LINE.test(line));
    const targetAt = targetLineIndex(lines, block);
    if (resourcesAt < 0 || targetAt < 0) throw new Error(`apps.${app} in values.yaml lacks its derived resources line or autoscaling.targetCPUUtilizationPercentage line (see ${fileURLToPath(import.meta.url)})`);
    lines[resourcesAt] = `    resources: {requests: {cpu: ${cpu}, memory: ${memory}}, limits: {memory: ${memoryLimit}}}`;
    lines[targetAt] = `      targetCPUUtilizationPercentage: ${targetCPUUtilizationPercentage}`;
  }
  return lines.join('\n');
}

export const readCapacity = (file = CAPACITY_FILE) => JSON.parse(readFileSync(file, 'utf8'));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  const capacity = readCapacity();
  const values = readFileSync(VALUES_FILE, 'utf8');
  if (mode === '--write') {
    writeFileSync(VALUES_FILE, writeChartValues(values, capacity));
    console.log(`helm/recur/values.yaml: requests and HPA targets set from helm/recur/capacity.json (measured ${capacity.measured})`);
  } else if (mode === '--check') {
    const problems = disagreements(values, capacity);
    if (problems.length > 0) {
      console.error(`helm/recur/values.yaml disagrees with helm/recur/capacity.json (measured ${capacity.measured}); run npm run capacity:chart:\n  ${problems.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`helm/recur/values.yaml: every app's requests and HPA target are the ones helm/recur/capacity.json gives (measured ${capacity.measured})`);
  } else {
    console.error('usage: node tools/helm/capacity-values.mjs --check | --write');
    process.exit(2);
  }
}
