// ESLint with typescript-eslint's recommended rules, as the Feathers repository lints; Prettier formats, so
// eslint-config-prettier turns off every rule that would argue with it.
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', 'public/', 'test/package/cli-app/', '**/*.d.ts'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  prettier,
  {
    rules: {
      // `_name` marks what a destructuring leaves out on purpose (`const { query: _query, ...caller } = params`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }
      ]
    }
  },
  {
    // Tests and benchmarks read the JSON answers of HTTP and GraphQL, whose shapes their assertions check.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  }
)
