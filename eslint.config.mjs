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
  ...tseslint.configs.strictTypeChecked,
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
      // A switch over a union names every member; a `default` counts as handling the rest, so a switch that
      // deliberately treats "everything else" one way need not list it.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Numbers print unambiguously in messages, ports and URLs; `undefined`, `null`, objects and `any` still do
      // not pass. Spelled out in full: an override replaces the preset's options, and the rule's defaults allow all.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowAny: false,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowRegExp: false,
        },
      ],
      // `() => void call()` style callbacks (`setTimeout(() => resolve())`, `.on('x', () => done())`) are idiomatic;
      // returning a void value from a block-bodied function is still reported.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
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
      // ...and put their fields (`any`) into URLs and messages; numbers as everywhere, nothing else.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowAny: true,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowRegExp: false,
        },
      ],
    },
  },
  {
    // The isolate scripts: plain JavaScript run as scripts inside the isolate (not in Node, not modules), with SES's
    // globals; type-checked by their own project, so the type-aware rules are off here.
    files: ['libs/sandbox/src/isolate/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    rules: {
      // They delete globals and descriptors by name on purpose (the host's hand-offs, what SES adds).
      '@typescript-eslint/no-dynamic-delete': 'off',
    },
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
