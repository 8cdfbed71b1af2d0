import type { RouteEntry } from '@svc/api';

interface CompiledRoute {
  entry: RouteEntry;
  method: string;
  pattern: RegExp;
  names: string[];
  staticSegments: number;
}

/**
 * Matches requests to the route table as API Gateway does: exact method, path templates with
 * `{name}` segments, the most specific route first, `$default` for everything else.
 */
export function compileRoutes(table: readonly RouteEntry[]) {
  const compiled: CompiledRoute[] = [];
  let fallback: RouteEntry | undefined;
  for (const entry of table) {
    if (entry.key === '$default') {
      fallback = entry;
      continue;
    }
    const names: string[] = [];
    const segments = entry.route.path.split('/').filter(Boolean);
    const source = segments
      .map((segment) => {
        const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
        if (param?.[1]) {
          names.push(param[1]);
          return '/([^/]+)';
        }
        return `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
      })
      .join('');
    compiled.push({
      entry,
      method: entry.route.method,
      pattern: new RegExp(`^${source || '/'}$`),
      names,
      staticSegments: segments.length - names.length,
    });
  }
  compiled.sort((a, b) => b.staticSegments - a.staticSegments);

  return (method: string, path: string): { entry: RouteEntry; pathParameters?: Record<string, string> } | undefined => {
    for (const route of compiled) {
      if (route.method !== method) continue;
      const match = route.pattern.exec(path);
      if (!match) continue;
      if (route.names.length === 0) return { entry: route.entry };
      const pathParameters: Record<string, string> = {};
      route.names.forEach((name, index) => {
        pathParameters[name] = safeDecode(match[index + 1] ?? '');
      });
      return { entry: route.entry, pathParameters };
    }
    return fallback ? { entry: fallback } : undefined;
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
