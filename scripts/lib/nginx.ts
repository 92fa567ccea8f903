import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

// nginx as the tests and `npm run cluster` run it: Debian's binary (scripts/setup-nginx.sh), all
// its files under one prefix directory, in the foreground.

/** The nginx binary on PATH or in the usual sbin directories; null when it is not installed. */
export function nginxBinary (): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']
  for (const d of dirs) if (d !== '' && existsSync(join(d, 'nginx'))) return join(d, 'nginx')
  return null
}

/** The start of an nginx.conf whose every file is under `prefix`: the caller adds to `http {` and closes it. */
export function nginxPreamble (prefix: string): string {
  return `
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'tmp/body')};
  proxy_temp_path ${join(prefix, 'tmp/proxy')};
  fastcgi_temp_path ${join(prefix, 'tmp/proxy')};
  uwsgi_temp_path ${join(prefix, 'tmp/proxy')};
  scgi_temp_path ${join(prefix, 'tmp/proxy')};`
}
