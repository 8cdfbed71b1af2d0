import { incompleteBody, S3Error } from './s3-error';

/**
 * Decodes a `Content-Encoding: aws-chunked` body. The AWS SDK sends streamed PutObject bodies
 * this way (`x-amz-content-sha256: STREAMING-…`): chunks of `<hex size>[;chunk-signature=…]\r\n
 * <bytes>\r\n`, a zero-size chunk, then trailer lines (e.g. `x-amz-checksum-crc32:…`) and an empty
 * line. Chunk signatures and trailers are not verified, like the request signature itself.
 */
const MAX_LINE_BYTES = 8 * 1024;
const CRLF = Buffer.from('\r\n');

export function isAwsChunked(headers: { 'content-encoding'?: string | undefined; 'x-amz-content-sha256'?: unknown }) {
  const encodings = (headers['content-encoding'] ?? '').split(',').map((item) => item.trim().toLowerCase());
  const sha = headers['x-amz-content-sha256'];
  return encodings.includes('aws-chunked') || (typeof sha === 'string' && sha.startsWith('STREAMING-'));
}

type DecoderState = 'header' | 'data' | 'data-end' | 'trailer' | 'done';

export async function* decodeAwsChunked(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  let state: DecoderState = 'header';
  let pending: Buffer = Buffer.alloc(0);
  let remaining = 0;

  const takeLine = (): string | undefined => {
    const end = pending.indexOf(CRLF);
    if (end < 0) {
      if (pending.length > MAX_LINE_BYTES) throw malformed();
      return undefined;
    }
    const line = pending.subarray(0, end).toString('latin1');
    pending = pending.subarray(end + 2);
    return line;
  };

  for await (const piece of source) {
    pending = pending.length > 0 ? Buffer.concat([pending, piece]) : Buffer.from(piece);
    for (;;) {
      if (state === 'header') {
        const line = takeLine();
        if (line === undefined) break;
        const sizeText = line.split(';')[0] ?? '';
        if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) throw malformed();
        remaining = Number.parseInt(sizeText, 16);
        state = remaining === 0 ? 'trailer' : 'data';
      } else if (state === 'data') {
        if (pending.length === 0) break;
        const take = Math.min(remaining, pending.length);
        const chunk = pending.subarray(0, take);
        pending = pending.subarray(take);
        remaining -= take;
        if (remaining === 0) state = 'data-end';
        yield chunk;
      } else if (state === 'data-end') {
        if (pending.length < 2) break;
        if (!pending.subarray(0, 2).equals(CRLF)) throw malformed();
        pending = pending.subarray(2);
        state = 'header';
      } else if (state === 'trailer') {
        const line = takeLine();
        if (line === undefined) break;
        if (line === '') state = 'done';
      } else {
        break;
      }
    }
  }
  // (A function call, because TypeScript does not see the loop's assignments to `state` here.)
  if (!isDone(state)) throw incompleteBody();
}

function isDone(state: DecoderState): boolean {
  return state === 'done';
}

function malformed(): S3Error {
  return new S3Error('InvalidRequest', 400, 'The aws-chunked body is malformed.');
}
