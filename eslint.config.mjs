// Lint for every TypeScript and JavaScript source in the workspace.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/generated/**', 'libs/contracts/src/gen/**', '.nx/**', '.data/**', 'deploy/k8s/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // Tests read arbitrary JSON answers.
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // One clock (DESIGN.md, "Time, money and events"): service code reads the time through the
    // injected Clock of @recur/kernel, so sandbox test clocks can move it for their customers.
    // Durations are measured with performance.now(), which this rule leaves alone.
    files: ['apps/*/src/**/*.ts', 'libs/{jobs,messaging,persistence,service-host}/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Read the time through the injected Clock (CLOCK of @recur/kernel), not new Date().' },
        { selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']", message: 'Read the time through the injected Clock (CLOCK of @recur/kernel), not Date.now().' },
        { selector: 'TemplateElement[value.raw=/\\bnow\\(\\)/i]', message: "Pass the clock's time as a query parameter instead of SQL now()." },
        { selector: 'Literal[value=/\\bnow\\(\\)/i]', message: "Pass the clock's time as a query parameter instead of SQL now()." },
      ],
    },
  },
  {
    // Domain code must not reach for transports, the ORM or the generated contracts (STYLE.md,
    // "What these anchors never do"). In a service, every file that is not an adapter is domain:
    // adapters are named for their role (controller, service, repository, mapper, translator,
    // consumer, client, worker, dispatcher, sender, module) or live in infrastructure/. So a new file is guarded
    // by default. Value sets and bounds come from @recur/vocabulary; amounts from @recur/money.
    files: ['apps/*/src/**/*.ts'],
    ignores: [
      'apps/gateway/**',
      '**/generated/**',
      '**/infrastructure/**',
      '**/*.{controller,service,repository,mapper,translator,consumer,client,worker,module}.ts',
      '**/*-{dispatcher,sender,config}.ts',
      '**/{app,main,instrument,tokens}.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@nestjs/*', '@grpc/*', '@bufbuild/*', '@prisma/*', 'kafkajs', 'pg', '**/generated/**'], message: 'Domain code stays free of transports and the ORM.' },
            { group: ['@recur/contracts', '@recur/messaging', '@recur/persistence', '@recur/service-host'], message: 'Domain code imports no adapters; use @recur/vocabulary, @recur/kernel, @recur/money, @recur/pricing.' },
          ],
        },
      ],
    },
  },
);
