/**
 * Keeps at most `limit` bytes of a response body. A receiver controls how much it sends, so the
 * worker stores (and reads) only a bounded prefix for the delivery log.
 */
export class ResponseBody {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private cut = false;

  private readonly limit: number;

  constructor(limit: number) {
    this.limit = Math.max(0, Math.floor(limit));
  }

  /** Adds a chunk; false once the limit is exceeded, meaning: stop reading. */
  push(chunk: Buffer): boolean {
    const room = this.limit - this.size;
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.size = this.limit;
      this.cut = true;
      return false;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  get truncated(): boolean {
    return this.cut;
  }

  /** The body as UTF-8; a truncated one loses the character the cut went through rather than gaining U+FFFD. */
  text(): string {
    const bytes = Buffer.concat(this.chunks);
    const end = this.cut ? completeUtf8Length(bytes) : bytes.length;
    return bytes.subarray(0, end).toString('utf8');
  }
}

/**
 * The length of the longest prefix that does not end inside a multi-byte UTF-8 sequence: walk
 * back over continuation bytes (10xxxxxx) to the lead byte and see whether its sequence is whole.
 * Bytes that are invalid anyway are left for the decoder to replace.
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  const end = bytes.length;
  let lead = end - 1;
  while (lead > 0 && end - lead < 4 && isContinuation(bytes[lead])) lead--;
  const byte = bytes[lead];
  if (byte === undefined) return end;
  return end - lead < sequenceLength(byte) ? lead : end;
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** How many bytes the sequence starting with this lead byte has (1 for ASCII and for stray bytes). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}
