// ESLint flat config: typescript-eslint's recommended rules and Effect's house formatting
// (dprint through @effect/eslint-plugin: 2 spaces, double quotes, no semicolons, width 120, as
// formatting.json says; scripts/generate formats its output with the same options).
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"
import formatting from "./formatting.json" with { type: "json" }

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", ".tmp/**", "docs/api/**", "bench/results.json"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.mjs"],
    plugins: { "@effect": effect },
    rules: {
      "@effect/dprint": ["error", { config: formatting }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "no-console": "off",
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }]
    }
  },
  {
    // library code: no console, no casts beyond `as const`
    files: ["src/**/*.ts"],
    ignores: ["src/bin/**"],
    rules: {
      "no-console": "error",
      "@typescript-eslint/consistent-type-assertions": ["error", { assertionStyle: "never" }]
    }
  }
)
