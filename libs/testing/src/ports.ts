// One way to pick a port: local-infra's, below the ephemeral range and per Jest worker.
export { freePort, freePortRun, freePorts } from '@recur/local-infra';
