// dns-packet ships its type and class tables as plain CommonJS modules without typings.
declare module 'dns-packet/types.js' {
  const table: { toString(code: number): string; toType(name: string): number };
  export default table;
}
declare module 'dns-packet/classes.js' {
  const table: { toString(code: number): string; toClass(name: string): number };
  export default table;
}
