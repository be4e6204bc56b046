// The unit tier (test/tiers.ts) runs no child process, server or socket: it is the inner loop and
// must stay fast and independent of the machine. In a unit file, starting a process, listening or
// connecting throws and names the tier, so a file that needs one is moved to the integration tier
// instead of slowing the unit tier down unnoticed.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

function refuse(what: string): never {
  throw new Error(
    `${what} in a unit test file: the unit tier (test/tiers.ts) runs no child process, server or ` +
      'socket; list this file in the integration tier instead',
  );
}

const guarded = {
  spawn: 'spawning a child process',
  spawnSync: 'spawning a child process',
  exec: 'spawning a child process',
  execSync: 'spawning a child process',
  execFile: 'spawning a child process',
  execFileSync: 'spawning a child process',
  fork: 'forking a child process',
} as const;
for (const [name, what] of Object.entries(guarded))
  Object.defineProperty(childProcess, name, {
    value: () => refuse(what),
    writable: true,
    configurable: true,
  });
Object.defineProperty(net, 'createServer', {
  value: () => refuse('opening a server'),
  writable: true,
  configurable: true,
});
Object.defineProperty(net, 'connect', {
  value: () => refuse('opening a socket'),
  writable: true,
  configurable: true,
});
Object.defineProperty(net, 'createConnection', {
  value: () => refuse('opening a socket'),
  writable: true,
  configurable: true,
});
// http, https and net servers all listen through net.Server.
Object.defineProperty(net.Server.prototype, 'listen', {
  value: () => refuse('opening a server'),
  writable: true,
  configurable: true,
});
syncBuiltinESMExports();
