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
    // Domain code must not reach for transports or the ORM (STYLE.md).
    files: ['apps/*/src/**/domain/**/*.ts', 'apps/subscription/src/customers/customer.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@nestjs/*', '@grpc/*', '**/generated/**', '@prisma/*', 'kafkajs'] }],
    },
  },
);
