import type { S3Error } from './s3-error';
import type { ObjectInfo } from './storage';

/** The XML documents S3 answers with (namespace and element names as in the S3 API reference). */
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

export function escapeXml(text: string): string {
  // Control characters other than tab, line feed and carriage return become character references, as S3 writes them.
  return text.replace(/[&<>"']|(?![\t\n\r])\p{Cc}/gu, (char) => {
    switch (char) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case "'":
        return '&apos;';
      default:
        return `&#x${char.charCodeAt(0).toString(16)};`;
    }
  });
}

export function element(name: string, value: string | number | boolean): string {
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

export function errorDocument(error: S3Error, requestId: string): string {
  const details = Object.entries(error.details).map(([name, value]) => element(name, value));
  return `${DECLARATION}<Error>${element('Code', error.code)}${element('Message', error.message)}${details.join('')}${element('RequestId', requestId)}${element('HostId', requestId)}</Error>`;
}

export interface ListingPage {
  bucket: string;
  prefix: string;
  delimiter: string | undefined;
  maxKeys: number;
  startAfter: string | undefined;
  continuationToken: string | undefined;
  nextContinuationToken: string | undefined;
  contents: ObjectInfo[];
  commonPrefixes: string[];
  /** encoding-type=url: keys and prefixes are URL-encoded, as S3 does when asked. */
  urlEncoded: boolean;
}

export function listBucketResult(page: ListingPage): string {
  const text = (value: string) => (page.urlEncoded ? encodeURIComponent(value) : value);
  const optional = (name: string, value: string | undefined) => (value === undefined ? '' : element(name, text(value)));
  const contents = page.contents.map(
    (info) =>
      `<Contents>${element('Key', text(info.key))}${element('LastModified', new Date(info.lastModified).toISOString())}${element('ETag', `"${info.md5}"`)}${element('Size', info.size)}${element('StorageClass', 'STANDARD')}</Contents>`,
  );
  const prefixes = page.commonPrefixes.map(
    (prefix) => `<CommonPrefixes>${element('Prefix', text(prefix))}</CommonPrefixes>`,
  );
  return [
    `${DECLARATION}<ListBucketResult xmlns="${NAMESPACE}">`,
    element('Name', page.bucket),
    element('Prefix', text(page.prefix)),
    optional('Delimiter', page.delimiter),
    optional('StartAfter', page.startAfter),
    page.continuationToken === undefined ? '' : element('ContinuationToken', page.continuationToken),
    page.nextContinuationToken === undefined ? '' : element('NextContinuationToken', page.nextContinuationToken),
    element('KeyCount', page.contents.length + page.commonPrefixes.length),
    element('MaxKeys', page.maxKeys),
    page.urlEncoded ? element('EncodingType', 'url') : '',
    element('IsTruncated', page.nextContinuationToken !== undefined),
    ...contents,
    ...prefixes,
    '</ListBucketResult>',
  ].join('');
}

export function postResponse(location: string, bucket: string, key: string, md5: string): string {
  return `${DECLARATION}<PostResponse>${element('Location', location)}${element('Bucket', bucket)}${element('Key', key)}${element('ETag', `"${md5}"`)}</PostResponse>`;
}
