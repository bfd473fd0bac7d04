// graphql-ws publishes its `ws` adapter only through package exports, which this project's module resolution
// (node10) does not read; its types are at the file the export points to.
declare module 'graphql-ws/use/ws' {
  export * from 'graphql-ws/dist/use/ws'
}
