/**
 * Writes CSV as the settlement format reads it (RFC 4180): fields holding the delimiter, a quote,
 * a line break or surrounding spaces are quoted, quotes doubled.
 */
export interface CsvWriteOptions {
  readonly delimiter?: ',' | ';';
  readonly lineEnding?: '\r\n' | '\n';
  readonly bom?: boolean;
}

export function csvField(value: string, delimiter: ',' | ';' = ','): string {
  const needsQuotes = value.includes(delimiter) || /["\r\n]/.test(value) || value.trim() !== value;
  return needsQuotes ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvLine(fields: readonly string[], options: CsvWriteOptions = {}): string {
  const delimiter = options.delimiter ?? ',';
  return `${fields.map((field) => csvField(field, delimiter)).join(delimiter)}${options.lineEnding ?? '\r\n'}`;
}

export function writeCsv(
  header: readonly string[],
  records: readonly (readonly string[])[],
  options: CsvWriteOptions = {},
) {
  return `${options.bom ? '\ufeff' : ''}${[header, ...records].map((fields) => csvLine(fields, options)).join('')}`;
}
