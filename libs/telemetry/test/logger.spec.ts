import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context } from '@opentelemetry/api';
import { JsonLogger } from '../src';

describe('JsonLogger', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  beforeAll(() => context.setGlobalContextManager(contextManager));
  afterAll(() => context.disable());

  it('writes one JSON object per line with the active trace and span ids', () => {
    const lines: string[] = [];
    const logger = new JsonLogger('subscription', 'info', (line) => lines.push(line));
    const tracer = provider.getTracer('test');
    tracer.startActiveSpan('work', (span) => {
      logger.info('customer created', { customer: 'cus_1' });
      span.end();
    });
    logger.log('outside any span', 'Bootstrap');
    const [inside, outside] = lines.map((line) => JSON.parse(line));
    const spanContext = exporter.getFinishedSpans()[0].spanContext();
    expect(inside).toMatchObject({ level: 'info', service: 'subscription', msg: 'customer created', customer: 'cus_1', trace_id: spanContext.traceId, span_id: spanContext.spanId });
    expect(outside).toMatchObject({ msg: 'outside any span', context: 'Bootstrap' });
    expect(outside.trace_id).toBeUndefined();
    expect(lines.every((line) => line.endsWith('\n') && !line.slice(0, -1).includes('\n'))).toBe(true);
  });

  it('drops lines below its level and keeps error stacks', () => {
    const lines: string[] = [];
    const logger = new JsonLogger('gateway', 'warn', (line) => lines.push(line));
    logger.info('hidden');
    logger.debug('hidden too');
    logger.error(new Error('boom'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'error', msg: 'boom', stack: expect.stringContaining('Error: boom') });
  });

  it('writes one readable line per entry in the pretty format, without trace ids', () => {
    const lines: string[] = [];
    const logger = new JsonLogger('catalog', 'info', (line) => lines.push(line), 'pretty');
    logger.info('migrations applied', { applied: ['init'] });
    logger.error(new Error('boom'));
    expect(lines[0]).toMatch(/^\d{2}:\d{2}:\d{2} INFO {2}catalog {10}migrations applied applied=\["init"\]\n$/);
    expect(lines[1]).toMatch(/^\d{2}:\d{2}:\d{2} ERROR catalog {10}boom\nError: boom\n {4}at /);
  });
});
