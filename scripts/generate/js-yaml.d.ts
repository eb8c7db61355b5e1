// The part of js-yaml 4 the generator uses (@types/js-yaml is not installed).
declare module "js-yaml" {
  export function load(text: string): unknown
}
