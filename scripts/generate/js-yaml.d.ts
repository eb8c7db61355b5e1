// The part of js-yaml 4 the generator uses (@types/js-yaml is not installed).
declare module "js-yaml" {
  export const CORE_SCHEMA: object
  export function load(text: string, options?: { readonly schema?: object }): unknown
}
