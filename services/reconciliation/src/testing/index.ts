/**
 * What tests and the bench drive below the API: reading a CSV file, processing one uploaded
 * object into a report, the object store client, and synthetic bank files of any size.
 */
export { parseCsv } from '../domain/csv';
export { type ProcessedFile, processUploadedObject } from '../domain/processing';
export { isRowFailure } from '../domain/rows';
export { readObject, s3, writeObject } from '../storage/objects';
export { generateCsv, syntheticAmountMinor, syntheticPaymentUuid } from './csv-generator';
