/**
 * Every schema of the service, and a registry by component name: the names are the
 * `components.schemas` keys of the OpenAPI document, so `$ref`s and ajv ids agree.
 */
import {
  AppErrorSchema,
  HTTPValidationErrorSchema,
  JsonRpcErrorSchema,
  ProblemSchema,
  ValidationErrorSchema,
} from './error-bodies.js';
import { FundListSchema, FundSchema } from './fund.js';
import { ApiCatalogSchema, DirectoryClaimSchema, HealthSchema } from './health.js';
import { CalendarBatchRequestSchema, TrailingBatchRequestSchema } from './requests.js';
import {
  CalendarReturnListSchema,
  CalendarReturnSchema,
  ExtraReturnsSchema,
  TrailingReturnsListSchema,
  TrailingReturnsSchema,
} from './returns.js';
import {
  RiskBatchRequestSchema,
  RiskFiguresListSchema,
  RiskFiguresSchema,
  RiskWindowSchema,
} from './risk.js';
import {
  FigureRowListSchema,
  FigureRowSchema,
  GrowthSchema,
  PickedRowListSchema,
  PickedRowSchema,
  ScreenPageSchema,
} from './screen.js';

export * from './common.js';
export * from './error-bodies.js';
export * from './fund.js';
export * from './health.js';
export * from './mcp.js';
export * from './requests.js';
export * from './returns.js';
export * from './risk.js';
export * from './screen.js';

/**
 * Component name → schema: what the OpenAPI document refers to (the query and path
 * parameter schemas are spelled out as parameters instead). Order matters for OpenAPI `$ref` substitution only in
 * that each value is a distinct object; nested uses of the same object become `$ref`s.
 */
export const SCHEMAS = {
  Fund: FundSchema,
  FundList: FundListSchema,
  ExtraReturns: ExtraReturnsSchema,
  TrailingReturns: TrailingReturnsSchema,
  TrailingReturnsList: TrailingReturnsListSchema,
  CalendarReturn: CalendarReturnSchema,
  CalendarReturnList: CalendarReturnListSchema,
  TrailingBatchRequest: TrailingBatchRequestSchema,
  CalendarBatchRequest: CalendarBatchRequestSchema,
  RiskWindow: RiskWindowSchema,
  RiskFigures: RiskFiguresSchema,
  RiskFiguresList: RiskFiguresListSchema,
  RiskBatchRequest: RiskBatchRequestSchema,
  FigureRow: FigureRowSchema,
  ScreenPage: ScreenPageSchema,
  FigureRowList: FigureRowListSchema,
  Growth: GrowthSchema,
  PickedRow: PickedRowSchema,
  PickedRowList: PickedRowListSchema,
  ValidationError: ValidationErrorSchema,
  HTTPValidationError: HTTPValidationErrorSchema,
  AppError: AppErrorSchema,
  Problem: ProblemSchema,
  JsonRpcError: JsonRpcErrorSchema,
  Health: HealthSchema,
  ApiCatalog: ApiCatalogSchema,
  DirectoryClaim: DirectoryClaimSchema,
} as const;

export type SchemaName = keyof typeof SCHEMAS;
