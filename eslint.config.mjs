import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '**/*.js',
      '!libs/sandbox/src/isolate/*.js',
      '**/*.mjs',
      '**/*.cjs',
      // Declarations for the isolate scripts' own type-check project (libs/sandbox/src/isolate/tsconfig.json).
      'libs/sandbox/src/isolate/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/libs/*/src/**', '../../libs/**'], message: 'Import libraries through @toolhost/<lib>.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Tests read JSON answers of many shapes; asserting on them is the type check.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The isolate scripts: plain JavaScript run as scripts inside the isolate (not in Node, not modules), with SES's
    // globals; type-checked by their own project, so the type-aware rules are off here.
    files: ['libs/sandbox/src/isolate/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'script',
      ecmaVersion: 2023,
      globals: {
        globalThis: 'readonly',
        harden: 'readonly',
        lockdown: 'readonly',
        repairIntrinsics: 'readonly',
        hardenIntrinsics: 'readonly',
        Compartment: 'readonly',
      },
    },
  },
);
