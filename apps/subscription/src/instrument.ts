// First import of main.ts: tracing must hook http and grpc before they load.
import { startTelemetry } from '@recur/telemetry';

startTelemetry({ serviceName: 'subscription' });
