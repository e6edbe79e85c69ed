/** The end of an exhaustive switch: a new case in the union is a compile error here, not a dropped event. */
export function assertNever(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}
