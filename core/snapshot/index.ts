export * from './columns.js';
export * from './errors.js';
export { checkColumns, compareUtf8 } from './invariants.js';
export * from './manifest.js';
export * from './reader.js';
export * from './schema.js';
export * from './writer.js';
