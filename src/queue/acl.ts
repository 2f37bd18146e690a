// The Redis ACL a team Redis can give baton: its keys only (`~<prefix>:*`), no pub/sub channels, and
// only the commands baton, BullMQ's Lua scripts and bull-board run. Derived from BullMQ's scripts
// (every `rcall`) plus the commands baton and BullMQ send directly (INFO commandstats over a full
// lifecycle with the dashboard); test/teams/tlsAcl.test.ts runs baton under exactly this rule and
// checks docs/teams.md prints it. Not included, on purpose: KEYS, SCAN, FLUSH*, CONFIG, DEBUG,
// CLIENT KILL/LIST, pub/sub. Without CONFIG the worker skips its eviction/persistence warning;
// without CLIENT LIST the dashboard shows no worker list.

/**
 * Connection handshake and naming (ioredis, BullMQ). INFO is ioredis' ready check (it waits while a
 * restarted Redis loads its data) and bull-board's Redis panel; it shows server statistics, no keys.
 */
const CONNECTION = ['hello', 'auth', 'ping', 'quit', 'select', 'client|setname', 'client|getname', 'info'];
/** Lua: BullMQ's scripts and baton's job adder run by sha, loaded with EVAL when missing. */
const SCRIPTING = ['eval', 'evalsha', 'script|load', 'script|exists'];
/** Called by BullMQ's scripts, or directly by baton, BullMQ and bull-board. */
const DATA = [
  'bzpopmin',
  'del',
  'exists',
  'get',
  'hdel',
  'hexists',
  'hget',
  'hgetall',
  'hincrby',
  'hlen',
  'hmget',
  'hmset',
  'hset',
  'incr',
  'incrby',
  'lindex',
  'llen',
  'lpop',
  'lpos',
  'lpush',
  'lrange',
  'lrem',
  'lset',
  'ltrim',
  'persist',
  'pexpire',
  'pexpireat',
  'pttl',
  'rename',
  'rpop',
  'rpoplpush',
  'rpush',
  'sadd',
  'scard',
  'set',
  'sismember',
  'smembers',
  'srem',
  'time',
  'type',
  'unlink',
  'xadd',
  'xdel',
  'xlen',
  'xrange',
  'xread',
  'xrevrange',
  'xtrim',
  'zadd',
  'zcard',
  'zcount',
  'zlexcount',
  'zpopmin',
  'zrange',
  'zrangebylex',
  'zrangebyscore',
  'zrem',
  'zremrangebyrank',
  'zremrangebyscore',
  'zrevrange',
  'zrevrangebyscore',
  'zscore',
];

export const BATON_ACL_COMMANDS: readonly string[] = [...CONNECTION, ...SCRIPTING, ...DATA];

/** The ACL SETUSER arguments (after the user name) for a baton user limited to `prefix`. */
export function batonAclRules(password: string, prefix: string): string[] {
  return ['reset', 'on', `>${password}`, `~${prefix}:*`, 'resetchannels', '-@all', ...BATON_ACL_COMMANDS.map((command) => `+${command}`)];
}

/** The command as a person types it in redis-cli (what docs/teams.md shows). */
export function batonAclCommand(user: string, password: string, prefix: string): string {
  return `ACL SETUSER ${user} ${batonAclRules(password, prefix)
    .map((rule) => (/[{}*>~|]/.test(rule) ? `'${rule}'` : rule))
    .join(' ')}`;
}
