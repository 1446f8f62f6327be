import type { ChildProcess } from 'node:child_process';

export const TEST_CLUSTER: string;

export interface ClickHouseServer {
  /** The HTTP interface, e.g. http://127.0.0.1:41234 */
  url: string;
  tcpPort: number;
  dir: string;
  child: ChildProcess | null;
}

export interface ClickHouseServers {
  servers: ClickHouseServer[];
  urls: string[];
  cluster: string;
  /** SIGKILLs server `i` (a crash, mid-export). */
  kill(i: number): Promise<void>;
  /** Starts server `i` again on the same ports and data. */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

/** The server binary: Debian puts it in /usr/sbin, which a non-root PATH may lack. */
export function clickhouseServerBinary(): string;

/** `count` servers, one cluster of `count` shards, ready to query. */
export function startClickHouseServers(count?: number): Promise<ClickHouseServers>;
