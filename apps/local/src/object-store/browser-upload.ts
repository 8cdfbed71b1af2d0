import { type Exchange, type StoreContext, send } from './exchange';
import { readPostForm } from './post-form';
import { type AuthorizedPost, checkPostForm } from './post-policy';
import { S3Error } from './s3-error';
import { DEFAULT_CONTENT_TYPE, OVERFLOW_DRAIN_BYTES, type StagedObject } from './storage';
import { postResponse } from './xml';

/**
 * POST /<bucket> with multipart/form-data: S3's browser-based upload. Every field before the file
 * is checked against the signed policy before a byte of the file is stored; the file streams into
 * storage with the policy's size limit and is kept only if it ends within the range.
 */
const MAX_PRE_DATA_BYTES = 20 * 1024;

export async function browserUpload(context: StoreContext, exchange: Exchange, bucket: string): Promise<void> {
  const { req } = exchange;
  if (!/^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '')) {
    throw new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold', {
      Condition: 'Bucket POST must be of the enclosure-type multipart/form-data',
    });
  }
  // The file is staged while the form streams and committed only once the whole form has parsed.
  let staged: StagedObject | undefined;
  let authorized: AuthorizedPost;
  try {
    authorized = await readPostForm(
      req,
      { maxPreDataBytes: MAX_PRE_DATA_BYTES, maxDrainBytes: OVERFLOW_DRAIN_BYTES },
      async (fields, file) => {
        const checked = checkPostForm({
          fields,
          bucket,
          filename: file.filename,
          credentials: context.credentials,
          now: context.now(),
          region: context.region,
        });
        staged = await context.storage.stage(bucket, checked.key, file.body, {
          contentType: checked.contentType ?? DEFAULT_CONTENT_TYPE,
          metadata: checked.metadata,
          lastModified: context.now() * 1000,
          minBytes: checked.sizeRange.min,
          maxBytes: Math.min(checked.sizeRange.max, context.maxObjectBytes),
        });
        return checked;
      },
    );
  } catch (error) {
    await staged?.discard();
    throw error;
  }
  if (!staged) throw new Error('The form was read without staging its file');
  const info = await staged.commit();
  context.objectCreated('ObjectCreated:Post', info, authorized.accessKeyId, exchange);

  const location = `http://${req.headers.host ?? '127.0.0.1'}/${bucket}/${encodeKey(info.key)}`;
  const etag = `"${info.md5}"`;
  const redirect = redirectTarget(authorized.successActionRedirect);
  if (redirect) {
    redirect.searchParams.set('bucket', bucket);
    redirect.searchParams.set('key', info.key);
    redirect.searchParams.set('etag', etag);
    return send(exchange, 303, { location: redirect.toString(), etag });
  }
  if (authorized.successActionStatus === 201) {
    const body = postResponse(location, bucket, info.key, info.md5);
    return send(exchange, 201, { 'content-type': 'application/xml', etag, location }, body);
  }
  send(exchange, authorized.successActionStatus, { etag, location });
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/** S3 redirects only to an absolute http(s) URL; anything else falls back to the status code. */
function redirectTarget(value: string | undefined): URL | undefined {
  if (!value || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}
