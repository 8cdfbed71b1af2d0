/** The API description the platform bundle carries (see platform-bundle.ts); an esbuild alias. */
declare module '@svc/openapi-document' {
  const document: Record<string, unknown>;
  export default document;
}
