// Bun bundles a `with { type: 'text' }` import into the compiled binary as a string.
declare module '*.proto' {
  const text: string;
  export default text;
}
