import { wireDomains } from '@svc/api/wiring';

// Tests call domain code directly as well as through the gateway: wired as every entry is.
wireDomains();
