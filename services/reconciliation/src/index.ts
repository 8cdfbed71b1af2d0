export { reportShape as reconciliationReportShape } from './domain/reports';
export { reconciliationEventData } from './event-data';
export { processFileBatch } from './handlers/file-processor';
export { reconciliationRoutes } from './handlers/routes';
export { REPORT, type ReportRecord, reportRecordSchema } from './repository/report-repository';
export {
  findSourceConfiguration,
  SOURCE_CONFIGURATION,
  type SourceConfiguration,
  saveSourceConfiguration,
  sourceConfigurationSchema,
} from './repository/source-configuration-repository';
export { resetObjectClient } from './storage/objects';
