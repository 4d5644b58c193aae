// Lint: typescript-eslint's recommended rules (syntax only, no type information: it runs in seconds), Prettier
// owns formatting (eslint-config-prettier turns off the rules it would fight), and a line length the code meets.
// Module boundaries and cycles are checked by dependency-cruiser (.dependency-cruiser.cjs), also in `npm run lint`.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/generated/**',
      'sdk/dist/**',
      'docs/dist/**',
      'node_modules/**',
      // Frozen: a migration that has run anywhere is never edited, not even its whitespace.
      'server/src/db/migrations/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // openapi-fetch bounds its path maps with `Record<string, any>`; the SDK's generics must accept the same.
    files: ['sdk/src/**/*.ts', 'scripts/generate-sdk.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.ts', '**/*.js', '**/*.cjs'],
    rules: {
      // A leading underscore marks a parameter or binding that is there for its position, not its value.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Prettier wraps code at 120; comments and SQL text are wrapped by hand to the same width.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true },
      ],
    },
  },
);
