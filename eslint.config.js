// @ts-check
// One lint for the codebase (`npm run lint`, part of `npm test`): typescript-eslint with type
// information on every TypeScript file; prettier owns the layout, so its conflicting rules are off.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      '.services/',
      '.scratch/',
      'coverage/',
      'bench/results/',
      'test/.typed-client-*/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // `async` here marks a function that fulfils a Promise-returning contract (a Fastify plugin, an
      // engine role, a queue handler); it needs no await to be right, and dropping `async` would turn
      // a synchronous throw into one that escapes the promise.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON off the wire as untyped data on purpose: asserting its shape is
    // the test's job, and typing a response as the contract would presume what is under test.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Plain JavaScript (worker-thread entry points, the launcher, scripts, configs) is outside the
    // TypeScript project: the untyped rule set applies.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['src/http/dashboard/assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
