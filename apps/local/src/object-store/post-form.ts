import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { invalidArgument, malformedPost, S3Error } from './s3-error';

/**
 * Reads a browser-style POST (multipart/form-data) the way S3 does: the fields before the part
 * named `file`, then the file, which `onFile` consumes as a stream; parts after the file are
 * ignored (S3: "the file must be the last field"). busboy parses as the bytes arrive, so policy,
 * signature and size are checked before and while the file streams, and a refused file is never
 * held in memory. Node's web `Request.formData()` would buffer the whole body before any check.
 */
export interface PostFile {
  filename: string | undefined;
  body: Readable;
}

export interface PostFormLimits {
  /** S3 refuses more than 20 KiB of fields before the file (MaxPostPreDataLengthExceeded). */
  maxPreDataBytes: number;
  /**
   * Once the upload is refused, the rest of the body is read and dropped for at most this many
   * bytes so the client gets its answer; past that, reading stops and the connection closes.
   */
  maxDrainBytes: number;
}

/** A `file` sent as a plain text part (no filename) is held in memory, so it is kept small. */
const MAX_TEXT_FILE_BYTES = 1024 * 1024;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export async function readPostForm<T>(
  req: IncomingMessage,
  limits: PostFormLimits,
  onFile: (fields: ReadonlyMap<string, string>, file: PostFile) => Promise<T>,
): Promise<T> {
  const outcome = await new Promise<Outcome<T>>((settle) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fieldSize: MAX_TEXT_FILE_BYTES } });
    } catch {
      settle({ ok: false, error: malformedPost() });
      return;
    }
    const fields = new Map<string, string>();
    let preDataBytes = 0;
    let failure: { error: unknown } | undefined;
    let handled: Promise<T> | undefined;
    const fail = (error: unknown) => {
      failure ??= { error };
    };
    // Stop reading: the caller answers and the connection closes (the rest of the body is never read).
    const stop = (error: unknown) => {
      fail(error);
      req.unpipe(parser);
      settle({ ok: false, error: failure?.error });
    };

    let drained = 0;
    req.on('data', (chunk: Buffer) => {
      if (!failure) return;
      drained += chunk.length;
      if (drained > limits.maxDrainBytes) stop(failure.error);
    });

    const startFile = (filename: string | undefined, body: Readable) => {
      handled = onFile(fields, { filename, body });
      handled.then(
        () => body.resume(),
        (error: unknown) => {
          // The reader gave up mid-file (too large to drain): stop. Otherwise drop the rest of the file.
          if (body.destroyed && !body.readableEnded) return stop(error);
          fail(error);
          body.resume();
        },
      );
    };

    parser.on('field', (rawName, value, info) => {
      if (handled || failure) return;
      const name = rawName.toLowerCase();
      if (name === 'file') {
        if (info.valueTruncated) return fail(invalidArgument('file', '', 'Send a large file as a file part.'));
        return startFile(undefined, Readable.from([Buffer.from(value, 'utf8')]));
      }
      preDataBytes += Buffer.byteLength(rawName) + Buffer.byteLength(value);
      if (info.valueTruncated || preDataBytes > limits.maxPreDataBytes) {
        return fail(
          new S3Error(
            'MaxPostPreDataLengthExceeded',
            400,
            'Your POST request fields preceding the upload file were too large.',
          ),
        );
      }
      if (fields.has(name)) return fail(invalidArgument(name, value, `The field '${name}' appears more than once.`));
      fields.set(name, value);
    });

    parser.on('file', (rawName, stream, info) => {
      if (handled || failure) return stream.resume();
      if (rawName.toLowerCase() !== 'file') {
        stream.resume();
        return fail(invalidArgument(rawName, '', `Only the field 'file' may be a file; '${rawName}' is one.`));
      }
      startFile(info.filename, stream);
    });

    parser.on('close', () => {
      if (!handled) return settle({ ok: false, error: failure?.error ?? missingFile() });
      handled.then(
        (value) => settle(failure ? { ok: false, error: failure.error } : { ok: true, value }),
        (error: unknown) => settle({ ok: false, error: failure?.error ?? error }),
      );
    });
    parser.on('error', () => stop(failure?.error ?? malformedPost()));
    // A client that goes away mid-body: end the parser so the file stream and its reader finish too.
    req.once('close', () => {
      if (!req.complete) parser.destroy();
    });
    req.pipe(parser);
  });
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}

function missingFile(): S3Error {
  return invalidArgument('file', '0', 'POST requires exactly one file upload per request.');
}
