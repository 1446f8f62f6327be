// ESLint for lib/, test/, bench/ and scripts/ (npm run lint). The TypeScript is linted with type
// information (tsconfig.lint.json covers lib/ and test/) so that promises nobody awaits are caught;
// bench/ and scripts/ are plain JavaScript and get the rules that need no types. Formatting is
// Prettier's job (.prettierrc.json), so no rule here is about layout.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/', 'build/', 'prebuilds/', 'node_modules/', 'native/', 'test/fixtures/', 'bench/fixtures/'],
  },
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-debugger': 'error',
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // An empty catch is how a best-effort cleanup says so; an empty block elsewhere is a slip.
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Bit-level format code tests control bytes on purpose.
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: './tsconfig.lint.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'no-unused-vars': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Rethrowing what a catch caught (typed unknown) is how errors pass through; new throws are ProfpackErrors.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A getter object handed to native code keeps its writer as `self`.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
      // Off, with reasons: the no-unsafe-* family reports every `new Map()` without type arguments and every
      // JSON.parse result (strict tsc and no-explicit-any already keep `any` out of signatures);
      // no-unsafe-enum-comparison reports the format code comparing a byte read from a file with a const enum, on
      // purpose; unbound-method reports passing plain functions stored on objects (adapters, backends), which never
      // use `this`; restrict-template-expressions reports numbers and arrays in messages, which read as meant.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // The viewer page's scripts run in the browser with d3 and d3-flame-graph loaded before them.
    files: ['lib/view/template/*.js'],
    languageOptions: { globals: { ...globals.browser, d3: 'readonly', flamegraph: 'readonly' } },
  },
  {
    // page.evaluate callbacks run in the browser.
    files: ['bench/view.mjs'],
    languageOptions: { globals: { window: 'readonly' } },
  },
  {
    files: ['**/*.cjs', 'scripts/install.js', 'scripts/native-sources.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
