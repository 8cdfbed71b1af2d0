/**
 * The page's static assets, served under content-hashed names so they can be cached for ever:
 * `/connect/assets/connect.<hash>.css` and `/connect/assets/connect.<hash>.js`.
 */
import { createHash } from 'node:crypto';
import { CONNECT_CSS } from './assets-css';
import { CONNECT_JS } from './assets-js';

export { CONNECT_CSS, CONNECT_JS };

export const ASSET_PATH_PREFIX = '/connect/assets/';
/** For responses of `findAsset`: the name changes with the content. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export type AssetName = 'connect.css' | 'connect.js';

export interface Asset {
  body: string;
  contentType: string;
}

/** The first 12 characters of the base64url SHA-256 of the content. */
export function contentHash(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('base64url').slice(0, 12);
}

/** `connect.css` + content → `connect.<hash>.css`. */
export function hashedFileName(name: string, body: string): string {
  const dot = name.lastIndexOf('.');
  return `${name.slice(0, dot)}.${contentHash(body)}${name.slice(dot)}`;
}

const SOURCES: Readonly<Record<AssetName, Asset>> = {
  'connect.css': { body: CONNECT_CSS, contentType: 'text/css; charset=utf-8' },
  'connect.js': { body: CONNECT_JS, contentType: 'text/javascript; charset=utf-8' },
};

const FILE_NAMES = new Map<AssetName, string>();
const BY_FILE_NAME = new Map<string, Asset>();
for (const [name, asset] of Object.entries(SOURCES) as [AssetName, Asset][]) {
  const fileName = hashedFileName(name, asset.body);
  FILE_NAMES.set(name, fileName);
  BY_FILE_NAME.set(fileName, asset);
}

/** The URL path of an asset, e.g. `/connect/assets/connect.AbC123-_xYz0.css`. */
export function assetPath(name: AssetName): string {
  return `${ASSET_PATH_PREFIX}${FILE_NAMES.get(name) ?? name}`;
}

/** The asset for a hashed file name (or its full path); undefined for anything else. */
export function findAsset(fileName: string): Asset | undefined {
  const name = fileName.startsWith(ASSET_PATH_PREFIX) ? fileName.slice(ASSET_PATH_PREFIX.length) : fileName;
  const asset = BY_FILE_NAME.get(name);
  return asset ? { ...asset } : undefined;
}
