/** Why a delivery target was refused before any connection was attempted. */
export type BlockedReason = 'invalid-url' | 'scheme' | 'credentials' | 'port' | 'address';

/**
 * A webhook target the SSRF guard refuses. Deliberately distinct from network errors: a blocked
 * target will be blocked again on retry, so the worker can fail the delivery for good.
 */
export class BlockedTargetError extends Error {
  override readonly name = 'BlockedTargetError';
  readonly reason: BlockedReason;
  /** The resolved (or literal) address that is not public, when that is the reason. */
  readonly address?: string;

  constructor(message: string, reason: BlockedReason, address?: string) {
    super(message);
    this.reason = reason;
    if (address !== undefined) this.address = address;
  }
}
