/**
 * The one ajv instance of a process: REST body validation (validation.ts) and MCP
 * tool arguments (mcp/tool-arguments.ts) compile their validators on it, once, at module load.
 * `verbose` makes errors carry the offending value, which the MCP messages quote
 * back to the model; REST's 422 reads only the keyword and path, so it is not
 * affected.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule.default;

export const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true, verbose: true });
addFormats(ajv, ['date', 'date-time', 'uri']);
